from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.remove_mail_domain_result_state import RemoveMailDomainResultState
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.remove_mail_domain_result_records_item import (
        RemoveMailDomainResultRecordsItem,
    )


T = TypeVar("T", bound="RemoveMailDomainResult")


@_attrs_define
class RemoveMailDomainResult:
    """
    Attributes:
        sending_open (bool): Whether the domain may send (its gate is open).
        state (RemoveMailDomainResultState): Whether a resource exists after an operation: what the OS shows, not what
            was asked.
        catch_all (None | str | Unset): The catch-all address, if any.
        domain (None | str | Unset):
        mail_host (None | str | Unset): The host name mail clients use for IMAP, POP3 and submission: `mail.<domain>`
            when a
            certificate of the account covers it, the node's name otherwise; `null` when the
            node's configuration names no host (a node never installed).
        records (list[RemoveMailDomainResultRecordsItem] | Unset): Every DNS record the domain needs for its mail (MX,
            SPF, DKIM, DMARC, the SRV records
            of RFC 6186, the autoconfig and autodiscover names), for the control plane to publish;
            empty when the domain is absent or `mail_host` is `null`.
    """

    sending_open: bool
    state: RemoveMailDomainResultState
    catch_all: None | str | Unset = UNSET
    domain: None | str | Unset = UNSET
    mail_host: None | str | Unset = UNSET
    records: list[RemoveMailDomainResultRecordsItem] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        sending_open = self.sending_open

        state = self.state.value

        catch_all: None | str | Unset
        if isinstance(self.catch_all, Unset):
            catch_all = UNSET
        else:
            catch_all = self.catch_all

        domain: None | str | Unset
        if isinstance(self.domain, Unset):
            domain = UNSET
        else:
            domain = self.domain

        mail_host: None | str | Unset
        if isinstance(self.mail_host, Unset):
            mail_host = UNSET
        else:
            mail_host = self.mail_host

        records: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.records, Unset):
            records = []
            for records_item_data in self.records:
                records_item = records_item_data.to_dict()
                records.append(records_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "sending_open": sending_open,
                "state": state,
            }
        )
        if catch_all is not UNSET:
            field_dict["catch_all"] = catch_all
        if domain is not UNSET:
            field_dict["domain"] = domain
        if mail_host is not UNSET:
            field_dict["mail_host"] = mail_host
        if records is not UNSET:
            field_dict["records"] = records

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.remove_mail_domain_result_records_item import (
            RemoveMailDomainResultRecordsItem,
        )

        d = dict(src_dict)
        sending_open = d.pop("sending_open")

        state = RemoveMailDomainResultState(d.pop("state"))

        def _parse_catch_all(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        catch_all = _parse_catch_all(d.pop("catch_all", UNSET))

        def _parse_domain(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        domain = _parse_domain(d.pop("domain", UNSET))

        def _parse_mail_host(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        mail_host = _parse_mail_host(d.pop("mail_host", UNSET))

        _records = d.pop("records", UNSET)
        records: list[RemoveMailDomainResultRecordsItem] | Unset = UNSET
        if _records is not UNSET:
            records = []
            for records_item_data in _records:
                records_item = RemoveMailDomainResultRecordsItem.from_dict(
                    records_item_data
                )

                records.append(records_item)

        remove_mail_domain_result = cls(
            sending_open=sending_open,
            state=state,
            catch_all=catch_all,
            domain=domain,
            mail_host=mail_host,
            records=records,
        )

        return remove_mail_domain_result
