from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.observe_certificates_result_certificates_item import (
        ObserveCertificatesResultCertificatesItem,
    )


T = TypeVar("T", bound="ObserveCertificatesResult")


@_attrs_define
class ObserveCertificatesResult:
    """
    Attributes:
        certificates (list[ObserveCertificatesResultCertificatesItem]):
    """

    certificates: list[ObserveCertificatesResultCertificatesItem]

    def to_dict(self) -> dict[str, Any]:
        certificates = []
        for certificates_item_data in self.certificates:
            certificates_item = certificates_item_data.to_dict()
            certificates.append(certificates_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "certificates": certificates,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.observe_certificates_result_certificates_item import (
            ObserveCertificatesResultCertificatesItem,
        )

        d = dict(src_dict)
        certificates = []
        _certificates = d.pop("certificates")
        for certificates_item_data in _certificates:
            certificates_item = ObserveCertificatesResultCertificatesItem.from_dict(
                certificates_item_data
            )

            certificates.append(certificates_item)

        observe_certificates_result = cls(
            certificates=certificates,
        )

        return observe_certificates_result
