from __future__ import annotations

from collections.abc import Mapping
from typing import (
    Any,
    Literal,
    Self,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="EnsureCertificateRequest")


@_attrs_define
class EnsureCertificateRequest:
    """
    Attributes:
        account (str):
        id (str):
        source (Literal['acme'] | Literal['bundle']): Where the certificate comes from.
        web_domain (str): The web domain whose vhost serves the certificate over HTTPS.
        blob (None | str | Unset): With `"source": "bundle"`: the uploaded blob (`PUT /v1/blobs/{sha256}`) holding the
            PEM chain and key. Absent with `"source": "acme"`.
    """

    account: str
    id: str
    source: Literal["acme", "bundle"]
    web_domain: str
    blob: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        account = self.account

        id = self.id

        source: Literal["acme", "bundle"]
        source = self.source

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

        def _parse_source(data: object) -> Literal["acme", "bundle"]:
            source_type_0 = cast(Literal["acme"], data)
            if source_type_0 != "acme":
                raise ValueError(
                    f"source_type_0 must match const 'acme', got '{source_type_0}'"
                )
            return source_type_0
            source_type_1 = cast(Literal["bundle"], data)
            if source_type_1 != "bundle":
                raise ValueError(
                    f"source_type_1 must match const 'bundle', got '{source_type_1}'"
                )
            return source_type_1

        source = _parse_source(d.pop("source"))

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
