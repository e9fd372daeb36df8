from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.ensure_certificate_request_source import EnsureCertificateRequestSource
from ..types import UNSET, Unset

T = TypeVar("T", bound="EnsureCertificateRequest")


@_attrs_define
class EnsureCertificateRequest:
    """
    Attributes:
        account (str):
        id (str):
        source (EnsureCertificateRequestSource): Where the certificate comes from.

            - `acme`: Issued over ACME HTTP-01 for the web domain's name and aliases, renewed by the node.
            - `bundle`: An uploaded blob (`blob`): the PEM chain, end-entity first, and its PKCS#8 private
            key, in one file. Not renewed by the node: upload a new bundle before it expires.
        web_domain (str): The web domain whose vhost serves the certificate over HTTPS.
        blob (None | str | Unset): With `"source": "bundle"`: the uploaded blob (`PUT /v1/blobs/{sha256}`) holding the
            PEM chain and key. Absent with `"source": "acme"`.
    """

    account: str
    id: str
    source: EnsureCertificateRequestSource
    web_domain: str
    blob: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        account = self.account

        id = self.id

        source = self.source.value

        web_domain = self.web_domain

        blob: None | str | Unset
        if isinstance(self.blob, Unset):
            blob = UNSET
        else:
            blob = self.blob

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "account": account,
                "id": id,
                "source": source,
                "web_domain": web_domain,
            }
        )
        if blob is not UNSET:
            field_dict["blob"] = blob

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        account = d.pop("account")

        id = d.pop("id")

        source = EnsureCertificateRequestSource(d.pop("source"))

        web_domain = d.pop("web_domain")

        def _parse_blob(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        blob = _parse_blob(d.pop("blob", UNSET))

        ensure_certificate_request = cls(
            account=account,
            id=id,
            source=source,
            web_domain=web_domain,
            blob=blob,
        )

        return ensure_certificate_request
