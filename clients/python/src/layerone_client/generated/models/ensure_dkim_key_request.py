from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.ensure_dkim_key_request_bits import EnsureDkimKeyRequestBits
from ..types import UNSET, Unset

T = TypeVar("T", bound="EnsureDkimKeyRequest")


@_attrs_define
class EnsureDkimKeyRequest:
    """
    Attributes:
        account (str):
        domain (str): One of the account's mail domains.
        id (str):
        selector (str):
        bits (EnsureDkimKeyRequestBits | Unset): The size of a DKIM RSA key. Default: EnsureDkimKeyRequestBits.RSA2048.
    """

    account: str
    domain: str
    id: str
    selector: str
    bits: EnsureDkimKeyRequestBits | Unset = EnsureDkimKeyRequestBits.RSA2048

    def to_dict(self) -> dict[str, Any]:
        account = self.account

        domain = self.domain

        id = self.id

        selector = self.selector

        bits: str | Unset = UNSET
        if not isinstance(self.bits, Unset):
            bits = self.bits.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "account": account,
                "domain": domain,
                "id": id,
                "selector": selector,
            }
        )
        if bits is not UNSET:
            field_dict["bits"] = bits

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        account = d.pop("account")

        domain = d.pop("domain")

        id = d.pop("id")

        selector = d.pop("selector")

        _bits = d.pop("bits", UNSET)
        bits: EnsureDkimKeyRequestBits | Unset
        if isinstance(_bits, Unset):
            bits = UNSET
        else:
            bits = EnsureDkimKeyRequestBits(_bits)

        ensure_dkim_key_request = cls(
            account=account,
            domain=domain,
            id=id,
            selector=selector,
            bits=bits,
        )

        return ensure_dkim_key_request
