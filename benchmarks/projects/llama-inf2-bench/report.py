"""Pretty-print a results CSV (no Neuron dependency)."""
import csv
import sys

with open(sys.argv[1]) as f:
    rows = list(csv.DictReader(f))
print(f"{'bs':>4} {'p50 (s)':>9} {'p90 (s)':>9} {'tok/s':>9}")
for r in rows:
    print(f"{r['batch_size']:>4} {float(r['p50_s']):9.3f} {float(r['p90_s']):9.3f} {float(r['tokens_per_s']):9.1f}")
