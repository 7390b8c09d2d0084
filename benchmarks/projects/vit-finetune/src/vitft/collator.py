"""Image collator producing static shapes (Neuron compiles one graph per shape)."""
import torch
import torch.nn.functional as F

IMAGE_SIZE = 224


class StaticImageCollator:
    """Resize every image to IMAGE_SIZE x IMAGE_SIZE and stack; labels as int64."""

    def __init__(self, image_processor, image_size=IMAGE_SIZE):
        self.image_processor = image_processor
        self.image_size = image_size

    def __call__(self, examples):
        pixel_values = []
        for ex in examples:
            pv = ex["pixel_values"]
            if not torch.is_tensor(pv):
                pv = torch.as_tensor(pv)
            if pv.shape[-1] != self.image_size or pv.shape[-2] != self.image_size:
                pv = F.interpolate(pv.unsqueeze(0), size=(self.image_size, self.image_size),
                                   mode="bilinear", align_corners=False).squeeze(0)
            pixel_values.append(pv)
        labels = torch.tensor([ex["label"] for ex in examples], dtype=torch.long)
        return {"pixel_values": torch.stack(pixel_values), "labels": labels}
