"""Minimal HTTP NER service on Inferentia2."""
import argparse
import json
from http.server import BaseHTTPRequestHandler, HTTPServer

from optimum.neuron import pipeline

ap = argparse.ArgumentParser()
ap.add_argument("--model", default="bert-ner-neuron")
ap.add_argument("--port", type=int, default=8080)
ap.add_argument("--aggregation", default="simple")
opts = ap.parse_args()

ner = pipeline("ner", model=opts.model, aggregation_strategy=opts.aggregation)


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        ents = ner(body["text"])
        for e in ents:
            e["score"] = float(e["score"])
        payload = json.dumps(ents).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(payload)


if __name__ == "__main__":
    HTTPServer(("0.0.0.0", opts.port), Handler).serve_forever()
