from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.set_https_policy_request_hsts_type_0 import (
        SetHttpsPolicyRequestHstsType0,
    )


T = TypeVar("T", bound="SetHttpsPolicyRequest")


@_attrs_define
class SetHttpsPolicyRequest:
    """
    Attributes:
        account (str):
        force_https (bool): Answer every HTTP request but the ACME challenge path with a 301 to the same host and
            path over HTTPS. In force only while a certificate is bound to the domain: without
            one the site is served over HTTP as before (`active` says which).
        id (str): The web domain's id: one policy per domain.
        hsts (None | SetHttpsPolicyRequestHstsType0 | Unset): The `Strict-Transport-Security` header sent on HTTPS
            answers only; `null` for none.
    """

    account: str
    force_https: bool
    id: str
    hsts: None | SetHttpsPolicyRequestHstsType0 | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.set_https_policy_request_hsts_type_0 import (
            SetHttpsPolicyRequestHstsType0,
        )

        account = self.account

        force_https = self.force_https

        id = self.id

        hsts: dict[str, Any] | None | Unset
        if isinstance(self.hsts, Unset):
            hsts = UNSET
        elif isinstance(self.hsts, SetHttpsPolicyRequestHstsType0):
            hsts = self.hsts.to_dict()
        else:
            hsts = self.hsts

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "account": account,
                "force_https": force_https,
                "id": id,
            }
        )
        if hsts is not UNSET:
            field_dict["hsts"] = hsts

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.set_https_policy_request_hsts_type_0 import (
            SetHttpsPolicyRequestHstsType0,
        )

        d = dict(src_dict)
        account = d.pop("account")

        force_https = d.pop("force_https")

        id = d.pop("id")

        def _parse_hsts(data: object) -> None | SetHttpsPolicyRequestHstsType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                hsts_type_0 = SetHttpsPolicyRequestHstsType0.from_dict(data)

                return hsts_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SetHttpsPolicyRequestHstsType0 | Unset, data)

        hsts = _parse_hsts(d.pop("hsts", UNSET))

        set_https_policy_request = cls(
            account=account,
            force_https=force_https,
            id=id,
            hsts=hsts,
        )

        return set_https_policy_request
