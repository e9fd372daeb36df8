from __future__ import annotations

from collections.abc import Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    Literal,
    Self,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.remove_sudo_allowlist_request import RemoveSudoAllowlistRequest


T = TypeVar("T", bound="RemoveSudoAllowlistEnvelope")


@_attrs_define
class RemoveSudoAllowlistEnvelope:
    """
    Attributes:
        action (Literal['remove_sudo_allowlist']):
        node_id (str):
        request_id (str):
        resource (RemoveSudoAllowlistRequest): Remove the node's sudo allowlist (its drop-in).
    """

    action: Literal["remove_sudo_allowlist"]
    node_id: str
    request_id: str
    resource: RemoveSudoAllowlistRequest

    def to_dict(self) -> dict[str, Any]:
        action = self.action

        node_id = self.node_id

        request_id = self.request_id

        resource = self.resource.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "action": action,
                "node_id": node_id,
                "request_id": request_id,
                "resource": resource,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.remove_sudo_allowlist_request import RemoveSudoAllowlistRequest

        d = dict(src_dict)
        action = cast(Literal["remove_sudo_allowlist"], d.pop("action"))
        if action != "remove_sudo_allowlist":
            raise ValueError(
                f"action must match const 'remove_sudo_allowlist', got '{action}'"
            )

        node_id = d.pop("node_id")

        request_id = d.pop("request_id")

        resource = RemoveSudoAllowlistRequest.from_dict(d.pop("resource"))

        remove_sudo_allowlist_envelope = cls(
            action=action,
            node_id=node_id,
            request_id=request_id,
            resource=resource,
        )

        return remove_sudo_allowlist_envelope
