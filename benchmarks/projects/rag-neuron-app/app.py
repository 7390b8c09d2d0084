"""Flask front end: POST /ask {"question": ...}."""
from flask import Flask, jsonify, request

from rag.embedder import Embedder
from rag.generator import Generator
from rag.retriever import Index
from settings import settings

app = Flask(__name__)
embedder = Embedder()
generator = Generator()
index = Index.from_jsonl(settings.docs_path, embedder.encode)


@app.post("/ask")
def ask():
    question = request.get_json()["question"]
    hits = index.search(embedder.encode([question])[0], k=settings.top_k)
    answer = generator.answer(question, [d for d, _ in hits])
    return jsonify({"answer": answer, "sources": [{"text": d, "score": s} for d, s in hits]})


@app.get("/health")
def health():
    return {"status": "ok", "embed": settings.embed_model_dir, "llm": settings.llm_model_dir}


if __name__ == "__main__":
    app.run(host="0.0.0.0", port=settings.port)
