"""Load-test a TGI-compatible /generate endpoint. Backend-agnostic: keep as is."""
import argparse
import concurrent.futures as cf
import statistics
import time

import requests


def one(url, prompt, max_new_tokens):
    t0 = time.perf_counter()
    r = requests.post(f"{url}/generate", json={"inputs": prompt, "parameters": {"max_new_tokens": max_new_tokens}},
                      timeout=300)
    r.raise_for_status()
    return time.perf_counter() - t0, len(r.json()["generated_text"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default="http://localhost:8080")
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--requests", type=int, default=32)
    ap.add_argument("--max-new-tokens", type=int, default=128)
    a = ap.parse_args()
    prompts = [f"Tell me fact number {i} about the ocean." for i in range(a.requests)]
    with cf.ThreadPoolExecutor(a.concurrency) as ex:
        res = list(ex.map(lambda p: one(a.url, p, a.max_new_tokens), prompts))
    lats = [r[0] for r in res]
    print(f"n={len(res)} mean={statistics.mean(lats):.2f}s p50={statistics.median(lats):.2f}s max={max(lats):.2f}s")


if __name__ == "__main__":
    main()
