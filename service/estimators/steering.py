"""The steering family: ``steering.persona_vector`` and ``steering.gradient_signature`` (importing registers both)."""

from service.estimators import steering_gradients, steering_persona

__all__ = ["steering_gradients", "steering_persona"]
