"""A spectral-convergence term built by a multi-resolution loss module of the same file: the term is
run inside its owner, on the magnitudes the owner computes. The owner takes them from `abs()` of
the STFT, so a silent clip has an all-zero target magnitude and the division by its norm is 0/0.
No training step in this file uses them."""
import torch
import torch.nn as nn


class SpectralConvergence(nn.Module):
    def forward(self, x_mag, y_mag):
        return torch.norm(y_mag - x_mag, p="fro") / torch.norm(y_mag, p="fro")  # <- GA402


class ClampedSpectralConvergence(nn.Module):
    def forward(self, x_mag, y_mag):
        return torch.norm(y_mag - x_mag, p="fro") / torch.norm(y_mag, p="fro")


class STFTLoss(nn.Module):
    def __init__(self, n_fft=64):
        super().__init__()
        self.n_fft = n_fft
        self.sc = SpectralConvergence()
        self.clamped = ClampedSpectralConvergence()

    def forward(self, x, y):
        window = torch.hann_window(self.n_fft)
        x_spec = torch.stft(x, self.n_fft, window=window, return_complex=True)
        y_spec = torch.stft(y, self.n_fft, window=window, return_complex=True)
        plain = self.sc(x_spec.abs(), y_spec.abs())
        # magnitudes clamped away from 0: the norm of the target's is > 0, even for a silent clip
        x_mag = torch.sqrt(torch.clamp(x_spec.real**2 + x_spec.imag**2, min=1e-7))
        y_mag = torch.sqrt(torch.clamp(y_spec.real**2 + y_spec.imag**2, min=1e-7))
        return plain + self.clamped(x_mag, y_mag)
