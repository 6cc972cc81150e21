"""A ROS message as the bytes DDS carries (CDR), and back: what a message costs on the wire."""
from __future__ import annotations

from rclpy.serialization import deserialize_message, serialize_message


def to_bytes(message) -> bytes:
    """The serialised message."""
    return serialize_message(message)


def from_bytes(data: bytes, message_type):
    """A message of `message_type` from its serialised bytes."""
    return deserialize_message(data, message_type)
