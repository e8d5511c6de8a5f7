"""The training-step model: a frozen summary of what a program's training steps do, and findings."""
