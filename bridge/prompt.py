"""An operator's words as the runtime takes them: the one shape of a trusted prompt, whether it
goes to the model at once (`ingress.py`) or after its files are in (`attachments/`)."""

from __future__ import annotations

from bridge.types import Route
from runtime.messages import InboundMessage, MessageKind, Origin, Priority, Provenance, Trust
from runtime.transcript import AttachmentBlock


def operator_prompt(
    text: str,
    route: Route,
    *,
    operator_id: str,
    message_ref: str | None,
    correlation_id: str,
    private: bool,
    attachments: tuple[AttachmentBlock, ...] = (),
    passed_on: bool = False,
) -> InboundMessage:
    """A trusted operator_prompt with interject priority, its provenance naming who sent it,
    from where, whether in their private chat with the agent (a DM, the console), whether it
    passes on someone else's words, and where its answer goes (DESIGN §3, Ingress 2)."""
    return InboundMessage(
        text=text,
        kind=MessageKind.OPERATOR_PROMPT,
        origin=Origin.OPERATOR,
        trust=Trust.TRUSTED_OPERATOR,
        priority=Priority.INTERJECT,
        delivery_surface=route.platform,
        provenance=Provenance(
            sender=operator_id,
            surface=route.platform,
            binding=route.workspace_id,
            platform_message_ref=message_ref,
            reply_route=route.to_json(),
            correlation_id=correlation_id,
            private=private,
            passed_on=passed_on,
        ),
        attachments=attachments,
    )
