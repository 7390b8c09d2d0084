"""trainkit: small helpers shared by our Trainium training scripts."""
__version__ = "0.3.1"
