# runtime: trainer.train() raises "element 0 of tensors does not require grad and does not have a grad_fn"; verified with torch 2.13.0 + transformers 5.24.0 + accelerate 1.15.0 (CPU, no torchvision)
import torch
import torch.nn.functional as F
from transformers import AutoConfig, AutoModelForSequenceClassification, Trainer, TrainingArguments


class LabelSmoothingTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        logits = outputs.logits.detach()  # <- GA101
        loss = F.cross_entropy(logits, labels, label_smoothing=0.1)
        return (loss, outputs) if return_outputs else loss


config = AutoConfig.for_model("bert", vocab_size=100, hidden_size=32, num_hidden_layers=2,
                              num_attention_heads=2, intermediate_size=64, num_labels=3)
model = AutoModelForSequenceClassification.from_config(config)
train_data = [{"input_ids": torch.randint(0, 100, (12,)), "labels": torch.tensor(i % 3)} for i in range(16)]
args = TrainingArguments(output_dir="out", per_device_train_batch_size=4, max_steps=4, report_to=[])
trainer = LabelSmoothingTrainer(model=model, args=args, train_dataset=train_data)
trainer.train()
