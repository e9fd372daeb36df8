from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.observe_certificates_result_certificates_item_source import (
    ObserveCertificatesResultCertificatesItemSource,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="ObserveCertificatesResultCertificatesItem")


@_attrs_define
class ObserveCertificatesResultCertificatesItem:
    """One certificate as `observe_certificates` reports it.

    Attributes:
        id (str):
        renewal_due (bool): An ACME certificate within the renewal window (or whose chain does not parse): the
            runner's next `renew_certificates` step queues its renewal.
        source (ObserveCertificatesResultCertificatesItemSource): Where a certificate comes from.

            - `acme`: Issued over ACME HTTP-01 for the web domain's name and aliases, renewed by the node.
            - `bundle`: An uploaded blob (`blob`): the PEM chain, end-entity first, and its PKCS#8 private
            key, in one file. Not renewed by the node: upload a new bundle before it expires.
        web_domain (str):
        domain (None | str | Unset): The web domain's name.
        fingerprint_sha256 (None | str | Unset):
        not_after (int | None | Unset): Read from the chain in place (Unix seconds); absent when the file does not
            parse.
    """

    id: str
    renewal_due: bool
    source: ObserveCertificatesResultCertificatesItemSource
    web_domain: str
    domain: None | str | Unset = UNSET
    fingerprint_sha256: None | str | Unset = UNSET
    not_after: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        renewal_due = self.renewal_due

        source = self.source.value

        web_domain = self.web_domain

        domain: None | str | Unset
        if isinstance(self.domain, Unset):
            domain = UNSET
        else:
            domain = self.domain

        fingerprint_sha256: None | str | Unset
        if isinstance(self.fingerprint_sha256, Unset):
            fingerprint_sha256 = UNSET
        else:
            fingerprint_sha256 = self.fingerprint_sha256

        not_after: int | None | Unset
        if isinstance(self.not_after, Unset):
            not_after = UNSET
        else:
            not_after = self.not_after

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "id": id,
                "renewal_due": renewal_due,
                "source": source,
                "web_domain": web_domain,
            }
        )
        if domain is not UNSET:
            field_dict["domain"] = domain
        if fingerprint_sha256 is not UNSET:
            field_dict["fingerprint_sha256"] = fingerprint_sha256
        if not_after is not UNSET:
            field_dict["not_after"] = not_after

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        id = d.pop("id")

        renewal_due = d.pop("renewal_due")

        source = ObserveCertificatesResultCertificatesItemSource(d.pop("source"))

        web_domain = d.pop("web_domain")

        def _parse_domain(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        domain = _parse_domain(d.pop("domain", UNSET))

        def _parse_fingerprint_sha256(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        fingerprint_sha256 = _parse_fingerprint_sha256(
            d.pop("fingerprint_sha256", UNSET)
        )

        def _parse_not_after(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        not_after = _parse_not_after(d.pop("not_after", UNSET))

        observe_certificates_result_certificates_item = cls(
            id=id,
            renewal_due=renewal_due,
            source=source,
            web_domain=web_domain,
            domain=domain,
            fingerprint_sha256=fingerprint_sha256,
            not_after=not_after,
        )

        return observe_certificates_result_certificates_item
