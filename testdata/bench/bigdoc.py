#!/usr/bin/env python3
"""Large single-document inputs for measuring the memory of the trace readers.

Usage: bigdoc.py otlp|tau2 SCALE OUT [--late]

otlp writes one OTLP traces object {"resourceSpans": [...]} on one line: SCALE
resource entries, each one trace of the six spans of
mine/testdata/formats/otlp_genai.jsonl's first line under ids and a
conversation of its own (about 2.7 kB an entry: SCALE 250000 is 690 MB).
tau2 writes one tau2-bench results document: the simulations of
../shared/data/raw/tau2/gpt-4.1_telecom_default_gpt-4.1_1trials.json (or
$TAU2_FILE) SCALE times over, each copy under new ids (2.7 MB a copy).
--late puts what readers need before the parts that use it last: an OTLP
entry's "resource" after its "scopeSpans", tau2's "info" and "tasks" after
"simulations".

Measure with GNU time (medians of 3, docs/performance.md):

  go build -o /tmp/fs . && python3 testdata/bench/bigdoc.py otlp 250000 /tmp/otlp.json
  /usr/bin/time -f "%e s %M KB" /tmp/fs build -q /tmp/otlp.json -o /tmp/m.json
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def otlp(scale, out, late):
    with open(os.path.join(HERE, "../../mine/testdata/formats/otlp_genai.jsonl")) as f:
        doc = json.loads(f.readline())
    entry = doc["resourceSpans"][0]
    out.write('{"resourceSpans":[')
    for i in range(scale):
        trace = "%032x" % (i + 1)
        spans = []
        for sp in entry["scopeSpans"][0]["spans"]:
            sp = dict(sp, traceId=trace)
            sp["attributes"] = [
                {"key": a["key"], "value": {"stringValue": "conv-%d" % i}}
                if a["key"] == "gen_ai.conversation.id" else a
                for a in sp["attributes"]]
            spans.append(sp)
        scopes = [{"scope": entry["scopeSpans"][0]["scope"], "spans": spans}]
        e = {"scopeSpans": scopes, "resource": entry["resource"]} if late else \
            {"resource": entry["resource"], "scopeSpans": scopes}
        if i:
            out.write(",")
        out.write(json.dumps(e, separators=(",", ":")))
    out.write("]}\n")


def tau2(scale, out, late):
    path = os.environ.get("TAU2_FILE", os.path.join(
        HERE, "../../../shared/data/raw/tau2/gpt-4.1_telecom_default_gpt-4.1_1trials.json"))
    with open(path) as f:
        doc = json.load(f)
    sims = doc.pop("simulations")
    head = {k: v for k, v in doc.items()}

    def part(k, v):
        return json.dumps(k) + ": " + json.dumps(v, indent=2)

    out.write("{\n")
    if not late:
        for k, v in head.items():
            out.write(part(k, v) + ",\n")
    out.write('"simulations": [\n')
    first = True
    for c in range(scale):
        for s in sims:
            s = dict(s, id="%s-copy%d" % (s["id"], c))
            if not first:
                out.write(",\n")
            first = False
            out.write(json.dumps(s, indent=2))
    out.write("\n]")
    if late:
        for k, v in head.items():
            out.write(",\n" + part(k, v))
    out.write("\n}\n")


def main():
    args = [a for a in sys.argv[1:] if a != "--late"]
    late = "--late" in sys.argv[1:]
    if len(args) != 3 or args[0] not in ("otlp", "tau2"):
        sys.exit(__doc__)
    with open(args[2], "w") as out:
        {"otlp": otlp, "tau2": tau2}[args[0]](int(args[1]), out, late)


if __name__ == "__main__":
    main()
