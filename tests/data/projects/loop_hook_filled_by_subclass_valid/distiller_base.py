"""A distiller base class in KD_Lib's style: the training loop lives here and leaves the loss to
a hook that each distiller overrides (`calculate_kd_loss`, which the base only declares)."""

import torch


class BaseDistiller:
    def __init__(self, teacher, student, loader, optimizer):
        self.teacher = teacher
        self.student = student
        self.loader = loader
        self.optimizer = optimizer

    def calculate_kd_loss(self, y_pred_student, y_pred_teacher, y_true):
        raise NotImplementedError

    def train_student(self, epochs=10):
        self.student.train()
        for _ in range(epochs):
            for data, label in self.loader:
                self.optimizer.zero_grad()
                with torch.no_grad():
                    teacher_out = self.teacher(data)
                student_out = self.student(data)
                loss = self.calculate_kd_loss(student_out, teacher_out, label)
                loss.backward()
                self.optimizer.step()
