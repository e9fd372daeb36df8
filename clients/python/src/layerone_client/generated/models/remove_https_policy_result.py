from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.remove_https_policy_result_state import RemoveHttpsPolicyResultState
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.remove_https_policy_result_hsts_type_0 import (
        RemoveHttpsPolicyResultHstsType0,
    )


T = TypeVar("T", bound="RemoveHttpsPolicyResult")


@_attrs_define
class RemoveHttpsPolicyResult:
    """
    Attributes:
        active (bool): Whether a certificate is bound to the domain, so that the vhost carries the policy
            now. A policy recorded without one waits for it, and removing the certificate takes the
            redirect and the header out of the vhost with the HTTPS virtual host.
        force_https (bool):
        state (RemoveHttpsPolicyResultState): Whether a resource exists after an operation: what the OS shows, not what
            was asked.
        hsts (None | RemoveHttpsPolicyResultHstsType0 | Unset): The `Strict-Transport-Security` header of a domain's
            HTTPS answers.
    """

    active: bool
    force_https: bool
    state: RemoveHttpsPolicyResultState
    hsts: None | RemoveHttpsPolicyResultHstsType0 | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.remove_https_policy_result_hsts_type_0 import (
            RemoveHttpsPolicyResultHstsType0,
        )

        active = self.active

        force_https = self.force_https

        state = self.state.value

        hsts: dict[str, Any] | None | Unset
        if isinstance(self.hsts, Unset):
            hsts = UNSET
        elif isinstance(self.hsts, RemoveHttpsPolicyResultHstsType0):
            hsts = self.hsts.to_dict()
        else:
            hsts = self.hsts

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "active": active,
                "force_https": force_https,
                "state": state,
            }
        )
        if hsts is not UNSET:
            field_dict["hsts"] = hsts

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.remove_https_policy_result_hsts_type_0 import (
            RemoveHttpsPolicyResultHstsType0,
        )

        d = dict(src_dict)
        active = d.pop("active")

        force_https = d.pop("force_https")

        state = RemoveHttpsPolicyResultState(d.pop("state"))

        def _parse_hsts(
            data: object,
        ) -> None | RemoveHttpsPolicyResultHstsType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                hsts_type_0 = RemoveHttpsPolicyResultHstsType0.from_dict(data)

                return hsts_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RemoveHttpsPolicyResultHstsType0 | Unset, data)

        hsts = _parse_hsts(d.pop("hsts", UNSET))

        remove_https_policy_result = cls(
            active=active,
            force_https=force_https,
            state=state,
            hsts=hsts,
        )

        return remove_https_policy_result
