from models.net import Net

__all__ = ["Net"]
