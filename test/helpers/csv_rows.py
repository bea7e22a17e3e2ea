"""Reads CSV on stdin with Python's csv module (the oracle for Saltdeck's CSV writer) and prints its rows as JSON."""
import csv, io, json, sys

text = sys.stdin.buffer.read().decode('utf-8')
print(json.dumps(list(csv.reader(io.StringIO(text, newline='')))))
