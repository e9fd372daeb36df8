from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="EnsureWebDomainRequest")


@_attrs_define
class EnsureWebDomainRequest:
    """
    Attributes:
        account (str):
        domain (str): A domain name; Unicode input is converted to lowercase punycode
        id (str):
        aliases (list[str] | Unset):
        docroot (None | str | Unset): The document root, relative to the home. Default: `web/<domain>/public_html`.
    """

    account: str
    domain: str
    id: str
    aliases: list[str] | Unset = UNSET
    docroot: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        account = self.account

        domain = self.domain

        id = self.id

        aliases: list[str] | Unset = UNSET
        if not isinstance(self.aliases, Unset):
            aliases = self.aliases

        docroot: None | str | Unset
        if isinstance(self.docroot, Unset):
            docroot = UNSET
        else:
            docroot = self.docroot

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "account": account,
                "domain": domain,
                "id": id,
            }
        )
        if aliases is not UNSET:
            field_dict["aliases"] = aliases
        if docroot is not UNSET:
            field_dict["docroot"] = docroot

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        account = d.pop("account")

        domain = d.pop("domain")

        id = d.pop("id")

        aliases = cast(list[str], d.pop("aliases", UNSET))

        def _parse_docroot(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        docroot = _parse_docroot(d.pop("docroot", UNSET))

        ensure_web_domain_request = cls(
            account=account,
            domain=domain,
            id=id,
            aliases=aliases,
            docroot=docroot,
        )

        return ensure_web_domain_request
