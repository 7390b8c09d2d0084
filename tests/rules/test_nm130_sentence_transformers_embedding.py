"""NM130: a Neuron sentence-transformers model becomes SentenceTransformer on the device."""

from tests.rules.case import findings, migrate, unchanged


def test_neuron_sentence_transformer_becomes_sentence_transformer() -> None:
    result = migrate(
        """
        import optimum.neuron

        embedder = optimum.neuron.NeuronSentenceTransformers.from_pretrained(
            "sentence-transformers/all-MiniLM-L6-v2", export=True, batch_size=8, sequence_length=256
        )
        vectors = embedder.encode(["a", "b"])
        """,
        "NM130",
    )
    assert "from sentence_transformers import SentenceTransformer" in result.text
    assert "embedder = SentenceTransformer(\n" in result.text and "device=torch.accelerator" in result.text
    assert "export=True" not in result.text
    assert "embedder.max_seq_length = 256" in result.text
    assert (3, "fixed") in findings(result, "NM130")


def test_stock_sentence_transformer_is_left_alone() -> None:
    unchanged(
        """
        from optimum.neuron import NeuronTrainer
        from sentence_transformers import SentenceTransformer

        embedder = SentenceTransformer("sentence-transformers/all-MiniLM-L6-v2")
        trainer = NeuronTrainer(model=model)  # another rule's business: its import stays
        """,
        "NM130",
    )


CALLED_LIKE_A_MODEL = """
from optimum.neuron import NeuronModelForSentenceTransformers
from transformers import AutoTokenizer

model = NeuronModelForSentenceTransformers.from_pretrained("BAAI/bge-small-en-v1.5", export=True, sequence_length=64)
tokenizer = AutoTokenizer.from_pretrained("BAAI/bge-small-en-v1.5")

queries = ["what is the capital of France?", "how do I bake bread?"]
for q in queries:
    inputs = tokenizer(q, return_tensors="pt")
    out = model(**inputs)
    print(q, out.sentence_embedding.shape)
"""


def test_model_call_on_a_tokenized_string_becomes_encode() -> None:
    result = migrate(CALLED_LIKE_A_MODEL, "NM130")
    assert "    out = model.encode([q], convert_to_tensor=True)\n    print(q, out.shape)" in result.text
    assert "inputs = tokenizer(" not in result.text and "model(**inputs)" not in result.text
    assert "called like a model" not in result.text
    assert (4, "fixed") in findings(result, "NM130") and (4, "todo") not in findings(result, "NM130")


def test_model_call_of_unknown_text_keeps_a_todo_and_the_load_is_not_fixed() -> None:
    # `text` is a parameter: a string (encode gives one vector) or a list (a batch)? Not certain: no rewrite
    result = migrate(
        """
        from optimum.neuron import NeuronModelForSentenceTransformers
        from transformers import AutoTokenizer

        model = NeuronModelForSentenceTransformers.from_pretrained("BAAI/bge-small-en-v1.5", export=True)
        tokenizer = AutoTokenizer.from_pretrained("BAAI/bge-small-en-v1.5")

        def embed(text):
            inputs = tokenizer(text, return_tensors="pt")
            out = model(**inputs)
            return out["sentence_embedding"]
        """,
        "NM130",
    )
    assert "out = model(**inputs)" in result.text and 'out["sentence_embedding"]' in result.text
    assert "inputs = tokenizer(text, return_tensors=\"pt\")" in result.text
    assert "forward takes one features dict, so this call raises TypeError" in result.text
    messages = [f.message for f in result.findings if f.rule == "NM130" and f.line == 4]
    assert not any(m.startswith("Neuron sentence-transformers model ->") for m in messages if "not complete" not in m)
    assert any("not complete: its calls (model(**inputs)) cannot run on SentenceTransformer" in m for m in messages)
    assert (9, "todo") in findings(result, "NM130")


def test_model_call_whose_output_is_read_otherwise_stays() -> None:
    result = migrate(CALLED_LIKE_A_MODEL.replace("out.sentence_embedding.shape", "out.token_embeddings.shape"),
                     "NM130")
    assert "out = model(**inputs)" in result.text and "= model.encode(" not in result.text
    assert any(f.line == 4 and "not complete: its calls" in f.message for f in result.findings if f.rule == "NM130")
    assert (10, "todo") in findings(result, "NM130")


LOADER = 'from optimum.neuron import NeuronSentenceTransformers\nmodel = NeuronSentenceTransformers.from_pretrained("enc_neuron")\n'
EXPORT = ("from optimum.neuron import NeuronSentenceTransformers\n"
          'm = NeuronSentenceTransformers.from_pretrained("BAAI/bge-small-en-v1.5", export=True, sequence_length=128)\n'
          'm.save_pretrained("enc_neuron")\n')


def test_load_of_a_compiled_folder_no_export_writes_stays_on_optimum_neuron() -> None:
    # SentenceTransformer cannot load a folder of NEFFs: rewritten, the load raised at run time
    result = migrate(LOADER, "NM130", path="search.py")
    assert result.text.endswith(LOADER.splitlines()[1] + "\n") and "sentence_transformers" not in result.text
    assert {f.severity.value for f in result.findings if f.rule == "NM130"} == {"todo"}
    assert any("no Neuron sentence-transformers / embedding export of this project" in f.message
               for f in result.findings)


def test_load_of_the_folder_an_export_job_saves_is_rewritten() -> None:
    result = migrate(LOADER, "NM130", path="search.py", project={"build.py": EXPORT})
    assert 'SentenceTransformer("enc_neuron", device=' in result.text


def test_tensor_parallel_size_is_removed_with_a_todo() -> None:
    """SentenceTransformer(...) has no tensor_parallel_size (TypeError): removed, a todo when it sharded (> 1)."""
    from tests.rules.case import migrate as run
    result = run(
        """
        from optimum.neuron import NeuronModelForSentenceTransformers

        model = NeuronModelForSentenceTransformers.from_pretrained("sentence-transformers/all-MiniLM-L6-v2",
                                                                   export=True, batch_size=1, sequence_length=128,
                                                                   tensor_parallel_size=2)
        """,
        "NM130", path="embed.py",
    )
    assert "tensor_parallel_size" not in "".join(line for line in result.text.splitlines() if "#" not in line)
    fixed = " ".join(f.message for f in result.findings if f.severity.value == "fixed")
    assert "tensor_parallel_size" not in fixed
    assert any(f.message.startswith("tensor_parallel_size=2") and "one device" in f.message
               for f in result.findings if f.severity.value == "todo")
