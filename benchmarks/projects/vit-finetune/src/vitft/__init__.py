"""ViT fine-tuning helpers."""
__version__ = "0.3.1"
