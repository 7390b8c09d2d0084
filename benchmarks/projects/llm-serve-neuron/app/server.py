import asyncio
import logging
from typing import List, Optional

from fastapi import FastAPI, HTTPException
from pydantic import BaseModel

from .model import Generator
from .settings import settings

logging.basicConfig(level=logging.INFO)
app = FastAPI(title="llm-serve-neuron")
_generator: Optional[Generator] = None
_lock = asyncio.Lock()


class GenerateRequest(BaseModel):
    prompts: List[str]
    max_new_tokens: int = 128
    temperature: float = 0.0


class GenerateResponse(BaseModel):
    completions: List[str]


@app.on_event("startup")
def _load():
    global _generator
    _generator = Generator(settings.compiled_model_dir, settings.batch_size, settings.sequence_length)


@app.get("/health")
def health():
    return {"status": "ok" if _generator is not None else "loading"}


@app.post("/generate", response_model=GenerateResponse)
async def generate(req: GenerateRequest):
    if _generator is None:
        raise HTTPException(503, "model not loaded")
    if req.max_new_tokens > settings.max_new_tokens:
        raise HTTPException(400, f"max_new_tokens > {settings.max_new_tokens}")
    out: List[str] = []
    async with _lock:  # one Neuron graph execution at a time
        for i in range(0, len(req.prompts), settings.batch_size):
            chunk = req.prompts[i : i + settings.batch_size]
            out.extend(await asyncio.to_thread(_generator.generate, chunk, req.max_new_tokens, req.temperature))
    return GenerateResponse(completions=out)
