from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.remove_web_domain_result_state import RemoveWebDomainResultState
from ..types import UNSET, Unset

T = TypeVar("T", bound="RemoveWebDomainResult")


@_attrs_define
class RemoveWebDomainResult:
    """
    Attributes:
        aliases (list[str]): The host names the vhost answers besides `domain`.
        state (RemoveWebDomainResultState): Whether a resource exists after an operation: what the OS shows, not what
            was asked.
        document_root (None | str | Unset): The absolute document root Apache serves.
        domain (None | str | Unset):
    """

    aliases: list[str]
    state: RemoveWebDomainResultState
    document_root: None | str | Unset = UNSET
    domain: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        aliases = self.aliases

        state = self.state.value

        document_root: None | str | Unset
        if isinstance(self.document_root, Unset):
            document_root = UNSET
        else:
            document_root = self.document_root

        domain: None | str | Unset
        if isinstance(self.domain, Unset):
            domain = UNSET
        else:
            domain = self.domain

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "aliases": aliases,
                "state": state,
            }
        )
        if document_root is not UNSET:
            field_dict["document_root"] = document_root
        if domain is not UNSET:
            field_dict["domain"] = domain

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        aliases = cast(list[str], d.pop("aliases"))

        state = RemoveWebDomainResultState(d.pop("state"))

        def _parse_document_root(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        document_root = _parse_document_root(d.pop("document_root", UNSET))

        def _parse_domain(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        domain = _parse_domain(d.pop("domain", UNSET))

        remove_web_domain_result = cls(
            aliases=aliases,
            state=state,
            document_root=document_root,
            domain=domain,
        )

        return remove_web_domain_result
