"""Record ids: a readable prefix and a random 128-bit hex part."""

import uuid


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex}"
