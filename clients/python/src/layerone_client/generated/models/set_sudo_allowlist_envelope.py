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
    from ..models.set_sudo_allowlist_request import SetSudoAllowlistRequest


T = TypeVar("T", bound="SetSudoAllowlistEnvelope")


@_attrs_define
class SetSudoAllowlistEnvelope:
    """
    Attributes:
        action (Literal['set_sudo_allowlist']):
        node_id (str):
        request_id (str):
        resource (SetSudoAllowlistRequest): Install the node's sudo allowlist.
    """

    action: Literal["set_sudo_allowlist"]
    node_id: str
    request_id: str
    resource: SetSudoAllowlistRequest

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
        from ..models.set_sudo_allowlist_request import SetSudoAllowlistRequest

        d = dict(src_dict)
        action = cast(Literal["set_sudo_allowlist"], d.pop("action"))
        if action != "set_sudo_allowlist":
            raise ValueError(
                f"action must match const 'set_sudo_allowlist', got '{action}'"
            )

        node_id = d.pop("node_id")

        request_id = d.pop("request_id")

        resource = SetSudoAllowlistRequest.from_dict(d.pop("resource"))

        set_sudo_allowlist_envelope = cls(
            action=action,
            node_id=node_id,
            request_id=request_id,
            resource=resource,
        )

        return set_sudo_allowlist_envelope
