from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.ensure_certificate_result_state import EnsureCertificateResultState
from ..types import UNSET, Unset

T = TypeVar("T", bound="EnsureCertificateResult")


@_attrs_define
class EnsureCertificateResult:
    """
    Attributes:
        covered (list[str]): The web domain's names (name and aliases) the certificate covers.
        state (EnsureCertificateResultState): Whether a resource exists after an operation: what the OS shows, not what
            was asked.
        uncovered (list[str]): The web domain's aliases it does not cover (served, but browsers will warn).
        domain (None | str | Unset): The web domain's name the HTTPS vhost serves.
        fingerprint_sha256 (None | str | Unset): SHA-256 of the end-entity certificate (DER), lowercase hex.
        issued (bool | Unset): Whether this job put a new chain in place (false: the one in place was kept). Default:
            False.
        not_after (int | None | Unset): When the end-entity certificate stops being valid (Unix seconds).
    """

    covered: list[str]
    state: EnsureCertificateResultState
    uncovered: list[str]
    domain: None | str | Unset = UNSET
    fingerprint_sha256: None | str | Unset = UNSET
    issued: bool | Unset = False
    not_after: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        covered = self.covered

        state = self.state.value

        uncovered = self.uncovered

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

        issued = self.issued

        not_after: int | None | Unset
        if isinstance(self.not_after, Unset):
            not_after = UNSET
        else:
            not_after = self.not_after

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "covered": covered,
                "state": state,
                "uncovered": uncovered,
            }
        )
        if domain is not UNSET:
            field_dict["domain"] = domain
        if fingerprint_sha256 is not UNSET:
            field_dict["fingerprint_sha256"] = fingerprint_sha256
        if issued is not UNSET:
            field_dict["issued"] = issued
        if not_after is not UNSET:
            field_dict["not_after"] = not_after

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        covered = cast(list[str], d.pop("covered"))

        state = EnsureCertificateResultState(d.pop("state"))

        uncovered = cast(list[str], d.pop("uncovered"))

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

        issued = d.pop("issued", UNSET)

        def _parse_not_after(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        not_after = _parse_not_after(d.pop("not_after", UNSET))

        ensure_certificate_result = cls(
            covered=covered,
            state=state,
            uncovered=uncovered,
            domain=domain,
            fingerprint_sha256=fingerprint_sha256,
            issued=issued,
            not_after=not_after,
        )

        return ensure_certificate_result
