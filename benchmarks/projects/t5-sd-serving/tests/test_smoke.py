import os

os.environ.setdefault("SMOKE_CPU", "1")


def test_config_shapes():
    from app.config import T5_INPUT_SHAPES, SD_SHAPES
    assert T5_INPUT_SHAPES["num_beams"] == 4
    assert SD_SHAPES["height"] == 512


def test_summarizer_imports():
    from app import summarize
    assert summarize.SMOKE
