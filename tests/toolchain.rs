//! The wasm toolchain settings agree with each other: the wasm-bindgen-cli version
//! pinned in `wasm-pack.toml` (which scripts/setup.sh installs and
//! scripts/build-wasm.sh uses) is the version of the `wasm-bindgen` crate in
//! `Cargo.lock`, and Cargo.toml pins that crate with `=` so it cannot drift.
//! A wasm-bindgen CLI and crate of different versions refuse to work together.
//!
//! Plain string parsing on purpose: no TOML dependency for one test.

use std::fs;
use std::path::Path;

fn read(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(name);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The lines of `[section]` (up to the next `[` header) of a TOML text.
fn section<'a>(text: &'a str, header: &str) -> Vec<&'a str> {
    let mut lines = text.lines().map(str::trim);
    let mut out = Vec::new();
    if lines.by_ref().any(|l| l == header) {
        for line in lines {
            if line.starts_with('[') {
                break;
            }
            out.push(line);
        }
    }
    out
}

/// The string value of `key = "value"` among `lines` (comments allowed after it).
fn string_value(lines: &[&str], key: &str) -> Option<String> {
    lines.iter().find_map(|line| {
        let (k, v) = line.split_once('=')?;
        if k.trim() != key {
            return None;
        }
        let v = v.trim().strip_prefix('"')?;
        Some(v[..v.find('"')?].to_string())
    })
}

/// The version of the package `name` in Cargo.lock (every `[[package]]` entry).
fn locked_versions(lock: &str, name: &str) -> Vec<String> {
    lock.split("[[package]]")
        .skip(1)
        .filter_map(|block| {
            let lines: Vec<&str> = block.lines().map(str::trim).collect();
            (string_value(&lines, "name")? == name).then(|| string_value(&lines, "version"))?
        })
        .collect()
}

fn pinned_cli_version() -> String {
    let config = read("wasm-pack.toml");
    string_value(&section(&config, "[wasm-bindgen-cli]"), "version")
        .expect("wasm-pack.toml: [wasm-bindgen-cli] has no version = \"...\"")
}

#[test]
fn wasm_pack_toml_pins_the_cargo_lock_wasm_bindgen_version() {
    let pinned = pinned_cli_version();
    let locked = locked_versions(&read("Cargo.lock"), "wasm-bindgen");
    assert_eq!(
        locked.len(),
        1,
        "Cargo.lock should hold exactly one wasm-bindgen version, found {locked:?}"
    );
    assert_eq!(
        pinned, locked[0],
        "wasm-pack.toml pins wasm-bindgen-cli {pinned} but Cargo.lock has wasm-bindgen {}; \
         change [wasm-bindgen-cli].version (and Cargo.toml's \"=\" pin) together",
        locked[0]
    );
}

#[test]
fn cargo_toml_pins_wasm_bindgen_exactly() {
    let manifest = read("Cargo.toml");
    let pins: Vec<String> = manifest
        .lines()
        .map(str::trim)
        .filter(|l| {
            l.split_once('=')
                .is_some_and(|(k, _)| k.trim() == "wasm-bindgen")
        })
        .map(|l| {
            let v = l.split_once('=').unwrap().1.trim();
            // `wasm-bindgen = "=x"` or `wasm-bindgen = { version = "=x", ... }`
            if v.starts_with('{') {
                let inner: Vec<&str> = v
                    .trim_matches(|c| c == '{' || c == '}')
                    .split(',')
                    .collect();
                string_value(&inner, "version").unwrap_or_default()
            } else {
                string_value(&[l], "wasm-bindgen").unwrap_or_default()
            }
        })
        .collect();
    assert!(
        !pins.is_empty(),
        "Cargo.toml has no wasm-bindgen dependency"
    );
    let pinned = pinned_cli_version();
    for pin in pins {
        assert_eq!(
            pin,
            format!("={pinned}"),
            "Cargo.toml must pin wasm-bindgen with \"={pinned}\" (the wasm-pack.toml version)"
        );
    }
}

#[test]
fn wasm_pack_toml_build_settings_are_complete() {
    let config = read("wasm-pack.toml");
    let build = section(&config, "[build]");
    for key in ["target", "out-dir", "out-name", "profile"] {
        assert!(
            string_value(&build, key).is_some_and(|v| !v.is_empty()),
            "wasm-pack.toml: [build] needs {key} = \"...\""
        );
    }
    let profile = string_value(&build, "profile").unwrap();
    if profile != "release" && profile != "dev" {
        let manifest = read("Cargo.toml");
        assert!(
            manifest
                .lines()
                .any(|l| l.trim() == format!("[profile.{profile}]")),
            "wasm-pack.toml: [build] profile {profile} is not defined in Cargo.toml"
        );
    }
    assert!(
        !section(&config, "[wasm-opt]").is_empty(),
        "wasm-pack.toml: [wasm-opt] section missing"
    );
}

/// The suites that check no Kafka rule, left out of mutation testing
/// (`.cargo/mutants.toml` says why for each).
const NOT_RULE_SUITES: [&str; 8] = [
    "allocations",
    "book_reference",
    "claims",
    "cli",
    "determinism",
    "rules_all",
    "toolchain",
    "web",
];

/// `make test` runs the rule suites as the one binary `rules_all` (issue 61:
/// one build and link instead of twenty) and every other suite by name: a
/// suite missing from the Makefile's list would never run in CI.
#[test]
fn make_test_runs_rules_all_and_every_other_suite() {
    let makefile = read("Makefile");
    let line = makefile
        .lines()
        .find(|l| l.starts_with("NATIVE_SUITES :="))
        .unwrap_or_else(|| panic!("Makefile: no NATIVE_SUITES line"));
    for suite in NOT_RULE_SUITES {
        assert!(
            line.contains(&format!("--test {suite} "))
                || line.ends_with(&format!("--test {suite}")),
            "Makefile NATIVE_SUITES must run tests/{suite}.rs: {line}"
        );
    }
    assert!(
        makefile.contains("cargo test --profile fast-test $(NATIVE_SUITES)"),
        "test-native runs rules_all with the other suites, in the fast-test profile"
    );
}

#[test]
fn mutation_testing_runs_every_rule_suite_in_tests() {
    let all = read("tests/rules_all.rs");
    let named: Vec<String> = all
        .lines()
        .filter_map(|l| l.trim().strip_prefix("#[path = \"")?.strip_suffix("\"]"))
        .map(|p| {
            p.trim_end_matches(".rs")
                .trim_end_matches("/main")
                .to_string()
        })
        .collect();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut suites: Vec<String> = std::fs::read_dir(&dir)
        .expect("tests/ is readable")
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name().into_string().ok()?;
            if e.path().is_dir() {
                e.path().join("main.rs").exists().then_some(name)
            } else {
                name.strip_suffix(".rs").map(str::to_string)
            }
        })
        .filter(|s| !NOT_RULE_SUITES.contains(&s.as_str()))
        .collect();
    suites.sort();
    let mut sorted = named.clone();
    sorted.sort();
    assert_eq!(
        sorted, suites,
        "tests/rules_all.rs must name every rule suite in tests/"
    );
    let config = read(".cargo/mutants.toml");
    assert!(
        config.contains(r#"additional_cargo_args = ["--lib", "--test", "rules_all"]"#)
            && config.contains(r#"features = ["mutants"]"#),
        ".cargo/mutants.toml builds and runs only the lib's tests and rules_all (every cargo command, the build included), with the mutants feature"
    );
    let cargo = read("Cargo.toml");
    let rules_all = cargo.split("name = \"rules_all\"").nth(1).unwrap_or("");
    assert!(
        rules_all
            .lines()
            .take(8)
            .any(|l| l.trim() == "test = false"),
        "rules_all is `test = false` (run only by name), so cargo test runs no suite twice"
    );
}
