import argparse
import io
import base64

import uvicorn
from fastapi import FastAPI

from app.summarize import Summarizer
from app import imagine


def build_app(t5_path, sd_path):
    api = FastAPI()
    summ = Summarizer(t5_path)
    pipe = imagine.load(sd_path)

    @api.post("/summarize")
    def summarize(body: dict):
        return {"summary": summ(body["text"])}

    @api.post("/imagine")
    def imagine_ep(body: dict):
        img = imagine.generate(pipe, body["prompt"])
        buf = io.BytesIO()
        img.save(buf, format="PNG")
        return {"png": base64.b64encode(buf.getvalue()).decode()}

    return api


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--t5", default="compiled/t5")
    ap.add_argument("--sd", default="compiled/sd")
    ap.add_argument("--port", type=int, default=8080)
    a = ap.parse_args()
    uvicorn.run(build_app(a.t5, a.sd), host="0.0.0.0", port=a.port)
