#!/usr/bin/env python3
"""addclaims.py TOUR.json CLAIMS.json — set each stop's claims from CLAIMS.json:
{"<stop index>": [[says, check], ...], ...}; keeps the file's formatting (indent 2)."""
import json,sys
p,c=sys.argv[1],sys.argv[2]
d=json.load(open(p))
claims=json.load(open(c))
for k,lst in claims.items():
    st=d['tour'][int(k)]
    st['claims']=[{"says":s,"check":x} for s,x in lst]
    for s,_ in lst:
        if s not in st['text']:
            print(f"WARNING stop {k}: says not in text: {s!r}")
open(p,'w').write(json.dumps(d,indent=2,ensure_ascii=False)+"\n")
