"""The gradaudit engine: a static model of PyTorch training steps, and the rules that read it."""
__version__ = "0.1.0"
