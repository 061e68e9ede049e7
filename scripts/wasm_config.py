#!/usr/bin/env python3
"""Print one setting of wasm-pack.toml, for the shell scripts.

Usage: wasm_config.py KEY   where KEY is section.key, e.g. build.out-dir.
Lists are printed one item per line; booleans as true/false.
"""
import pathlib
import sys
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(ROOT / "wasm-pack.toml", "rb") as f:
        config = tomllib.load(f)
    value = config
    for part in sys.argv[1].split("."):
        if not isinstance(value, dict) or part not in value:
            print(f"wasm-pack.toml: missing setting {sys.argv[1]}", file=sys.stderr)
            return 1
        value = value[part]
    if isinstance(value, bool):
        print("true" if value else "false")
    elif isinstance(value, list):
        for item in value:
            print(item)
    else:
        print(value)
    return 0


if __name__ == "__main__":
    sys.exit(main())
