"""Plain helpers shared by the GLUE scripts. Pure Python / numpy; nothing device-specific."""
import numpy as np

TASK_TO_KEYS = {
    "cola": ("sentence", None),
    "mnli": ("premise", "hypothesis"),
    "mrpc": ("sentence1", "sentence2"),
    "qnli": ("question", "sentence"),
    "qqp": ("question1", "question2"),
    "rte": ("sentence1", "sentence2"),
    "sst2": ("sentence", None),
    "stsb": ("sentence1", "sentence2"),
    "wnli": ("sentence1", "sentence2"),
}


def _accuracy(preds, labels):
    return float((preds == labels).mean())


def _f1(preds, labels):
    tp = float(((preds == 1) & (labels == 1)).sum())
    fp = float(((preds == 1) & (labels == 0)).sum())
    fn = float(((preds == 0) & (labels == 1)).sum())
    if tp == 0:
        return 0.0
    p, r = tp / (tp + fp), tp / (tp + fn)
    return 2 * p * r / (p + r)


def compute_glue_metrics(task_name, p, is_regression=False):
    preds = p.predictions[0] if isinstance(p.predictions, tuple) else p.predictions
    preds = np.squeeze(preds) if is_regression else np.argmax(preds, axis=1)
    labels = p.label_ids
    if is_regression:
        return {"mse": float(((preds - labels) ** 2).mean())}
    out = {"accuracy": _accuracy(preds, labels)}
    if task_name in ("mrpc", "qqp"):
        out["f1"] = _f1(preds, labels)
    return out
