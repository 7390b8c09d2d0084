"""NM605: use_flash_attention_2= -> attn_implementation=, use_auth_token= -> token= in transformers loading calls."""

from tests.rules.case import findings, migrate, unchanged


def test_removed_loading_kwargs_are_renamed() -> None:
    result = migrate(
        """
        import transformers

        tok = transformers.AutoTokenizer.from_pretrained(
            "meta-llama/Llama-3.2-1B",
            use_auth_token=HF_TOKEN,
        )
        """,
        "NM605",
    )
    assert "    token=HF_TOKEN,\n" in result.text
    assert "use_auth_token" not in result.text
    assert findings(result, "NM605") == {(5, "fixed")}


def test_a_project_function_keyword_is_left_alone() -> None:
    unchanged(
        """
        from transformers import AutoModel

        def download(name, use_auth_token=None):
            return fetch(name, use_auth_token=use_auth_token)
        """,
        "NM605",
    )


def test_two_model_loaders_get_the_token_with_each_prefix() -> None:
    """from_vision_text_pretrained / from_encoder_decoder_pretrained hand each load only its prefixed keywords
    (the index PREFIXED_LOADERS, read from transformers' sources): use_auth_token becomes one token per model."""
    result = migrate(
        """
        from transformers import EncoderDecoderModel, VisionTextDualEncoderModel

        model = VisionTextDualEncoderModel.from_vision_text_pretrained(
            "vision", "text", use_auth_token=True if args.use_auth_token else None
        )
        seq = EncoderDecoderModel.from_encoder_decoder_pretrained("enc", "dec", use_auth_token=HF_TOKEN)
        """,
        "NM605",
    )
    assert '"vision", "text", text_token=True if args.use_auth_token else None, vision_token=True if' in result.text
    assert '"enc", "dec", decoder_token=HF_TOKEN, encoder_token=HF_TOKEN)' in result.text
    assert "use_auth_token=" not in result.text and findings(result, "NM605") == {(4, "fixed"), (6, "fixed")}


def test_two_model_loader_with_a_call_or_a_given_token_gets_a_todo() -> None:
    result = migrate(
        """
        from transformers import VisionTextDualEncoderModel

        a = VisionTextDualEncoderModel.from_vision_text_pretrained("v", "t", use_auth_token=read_token())
        b = VisionTextDualEncoderModel.from_vision_text_pretrained("v", "t", use_auth_token=True, text_token=True)
        """,
        "NM605",
    )
    code = [line for line in result.text.splitlines() if not line.startswith("#")]
    assert sum(line.count("use_auth_token=") for line in code) == 2
    assert findings(result, "NM605") == {(3, "todo"), (4, "todo")}
    messages = [f.message for f in result.findings if f.rule == "NM605"]
    assert all("text_token=..., vision_token=..." in m for m in messages)


def test_the_prefixed_token_reaches_both_loads() -> None:
    """What the rewrite relies on, run for real: the loader strips each prefix and passes the rest on."""
    import inspect

    from transformers import VisionTextDualEncoderModel

    source = inspect.getsource(VisionTextDualEncoderModel.from_vision_text_pretrained)
    assert 'argument.startswith("vision_")' in source and 'argument.startswith("text_")' in source
    assert "AutoModel.from_pretrained(text_model_name_or_path, *model_args, **kwargs_text)" in source


def test_datasets_loaders_take_token_too() -> None:
    result = migrate(
        """
        import datasets
        from datasets import load_dataset as ld

        raw = ld("json", data_files=files, cache_dir=cache, use_auth_token=True if args.use_auth_token else None)
        builder = datasets.load_dataset_builder("glue", "mrpc", use_auth_token=tok, token=tok)
        """,
        "NM605",
    )
    assert 'ld("json", data_files=files, cache_dir=cache, token=True if args.use_auth_token else None)' in result.text
    assert findings(result, "NM605") == {(4, "fixed"), (5, "todo")}  # beside token=: the user deletes one


def test_a_dataset_load_without_the_keyword_or_from_another_library_is_left_alone() -> None:
    unchanged(
        """
        from datasets import load_dataset
        from mylib import load_dataset as load_mine

        raw = load_dataset("json", data_files=files, token=True)
        mine = load_mine("x", use_auth_token=True)
        """,
        "NM605",
    )


def test_the_renamed_keyword_runs_on_the_installed_datasets(tmp_path) -> None:
    data = tmp_path / "d.json"
    data.write_text('{"a": 1}\n')
    result = migrate(
        f"""
        from datasets import load_dataset

        raw = load_dataset("json", data_files={str(data)!r}, cache_dir={str(tmp_path / "cache")!r}, use_auth_token=None)
        """,
        "NM605",
    )
    namespace: dict = {}
    exec(compile(result.text, "train.py", "exec"), namespace)  # the stock library itself takes the keyword
    assert namespace["raw"]["train"][0] == {"a": 1}
