import json
import os
import platform
import time


def write_results(path, records, config):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    payload = {
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "host": platform.node(),
        "config": config,
        "results": records,
    }
    with open(path, "w") as f:
        json.dump(payload, f, indent=2)
    return path
