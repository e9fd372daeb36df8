from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.unsuspend_web_domain_result_state import UnsuspendWebDomainResultState

T = TypeVar("T", bound="UnsuspendWebDomainResult")


@_attrs_define
class UnsuspendWebDomainResult:
    """
    Attributes:
        domain (str):
        state (UnsuspendWebDomainResultState): Whether a resource exists after an operation: what the OS shows, not what
            was asked.
        suspended (bool): Whether the vhost now answers 403 (all but the certificate challenge).
    """

    domain: str
    state: UnsuspendWebDomainResultState
    suspended: bool

    def to_dict(self) -> dict[str, Any]:
        domain = self.domain

        state = self.state.value

        suspended = self.suspended

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "domain": domain,
                "state": state,
                "suspended": suspended,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        domain = d.pop("domain")

        state = UnsuspendWebDomainResultState(d.pop("state"))

        suspended = d.pop("suspended")

        unsuspend_web_domain_result = cls(
            domain=domain,
            state=state,
            suspended=suspended,
        )

        return unsuspend_web_domain_result
