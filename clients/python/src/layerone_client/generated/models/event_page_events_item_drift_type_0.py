from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.event_page_events_item_drift_type_0_aspect import (
    EventPageEventsItemDriftType0Aspect,
)

T = TypeVar("T", bound="EventPageEventsItemDriftType0")


@_attrs_define
class EventPageEventsItemDriftType0:
    """A resource recorded in state.db that the OS no longer shows as recorded. Reported once
    when found, once when it is gone; never repaired by the check (`rebuild_account` repairs).

    What is compared is what each family declares it derives: the files it derives whole,
    the lines it contributes to a table shared by many resources, and the settings it makes
    outside files (MariaDB's users and grants).

        Attributes:
            aspect (EventPageEventsItemDriftType0Aspect): What about a resource drifted: one of the aspects the families
                declare, each with what it means.

                - `user_missing`: The account's user is not in passwd (or no longer carries the node's marker).
                - `home_missing`: The account's home is gone.
                - `slice_limits_missing`: The drop-in of the account's systemd slice, which carries its limits on
                `debian`, is gone.
                - `slice_limits_differs`: The slice's drop-in is not what state.db derives.
                - `authorized_keys_missing`: The account has SSH keys recorded and no `authorized_keys`.
                - `authorized_keys_differs`: `authorized_keys` is not what state.db derives.
                - `vhost_missing`: The web domain's vhost file is gone.
                - `vhost_differs`: The vhost file is not what state.db derives.
                - `postfix_entry_missing`: A Postfix table lacks a line the resource derives.
                - `postfix_table_differs`: A Postfix table holds a line state.db does not derive.
                - `mail_client_settings_missing`: A mail domain's client settings (autoconfig, autodiscover) or their vhost are
                gone.
                - `mail_client_settings_differs`: A mail domain's client settings or their vhost are not what state.db derives.
                - `dovecot_entry_missing`: Dovecot's passwd-file lacks the mailbox's line as state.db derives it.
                - `dovecot_passwd_differs`: Dovecot's passwd-file holds a line state.db does not derive.
                - `sieve_script_missing`: An autoresponder's Sieve script is gone.
                - `sieve_script_differs`: An autoresponder's Sieve script is not what state.db derives.
                - `open_dkim_entry_missing`: OpenDKIM's KeyTable or SigningTable lacks the DKIM key's line.
                - `open_dkim_table_differs`: OpenDKIM's KeyTable or SigningTable holds a line state.db does not derive.
                - `dkim_key_missing`: A DKIM key's private key file is gone.
                - `sudo_dropin_missing`: The sudo allowlist is recorded as installed and its drop-in is gone.
                - `sudo_dropin_differs`: The sudo drop-in is not what state.db derives, or is there while the allowlist is
                recorded as removed.
                - `mysql_database_missing`: A recorded database is not in MariaDB.
                - `mysql_database_differs`: A database's character set or collation is not the one recorded.
                - `mysql_user_missing`: A recorded MariaDB user has no account at any host.
                - `mysql_user_differs`: A MariaDB user's hosts are not the ones recorded.
                - `mysql_grant_missing`: A recorded grant's user has no privilege on its database at one of its hosts.
                - `mysql_grant_differs`: A grant's privileges in MariaDB are not the ones state.db derives (its set, less the
                write privileges while the account is over its quota).
                - `php_pool_missing`: The account's FPM pool for a PHP version its domains use is gone.
                - `php_pool_differs`: An FPM pool of the account is not what state.db derives, or is there for a version none of
                its domains uses.
                - `crontab_missing`: The account has scheduled tasks recorded and no crontab in the cron spool.
                - `crontab_differs`: The account's crontab is not what state.db derives.
                - `ftp_login_missing`: pure-ftpd's passwd file does not hold the FTP account's line as recorded.
                - `ftp_passwd_differs`: pure-ftpd's passwd file holds a line no FTP account derives (a suspended login's among
                them).
                - `certificate_chain_missing`: A certificate's chain file is gone.
                - `certificate_key_missing`: A certificate's private key file is gone.
                - `certificate_differs`: A certificate's chain and key in place are not a pair for its web domain (the key is
                another's, or the chain does not parse or name the domain).
                - `listener_certificate_stale`: A listener serving a certificate's name (Apache on 443, Dovecot on 993 and 995,
                Postfix on 587 for its mail host) presents another certificate than the one recorded.
                - `backup_missing`: A backup's archive is gone from `blobs/out`.
                - `backup_differs`: A backup's archive in `blobs/out` is not the size recorded.
                - `auth_user_file_missing`: A protected directory's `AuthUserFile` is gone.
                - `auth_user_file_differs`: A protected directory's `AuthUserFile` is not what state.db derives.
            family (str): The family whose derivation drifted.
            message (str): One line for an operator.
            owner (str): The account id, or `node:` for the node's own resources and shared tables.
            resource_id (str): The resource that drifted; for what one account's rows derive together (its
                `authorized_keys`, FPM pools, crontab) the account's id; `node:` for a table many
                resources share that holds a line state.db does not derive (no one resource's).
    """

    aspect: EventPageEventsItemDriftType0Aspect
    family: str
    message: str
    owner: str
    resource_id: str

    def to_dict(self) -> dict[str, Any]:
        aspect = self.aspect.value

        family = self.family

        message = self.message

        owner = self.owner

        resource_id = self.resource_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "aspect": aspect,
                "family": family,
                "message": message,
                "owner": owner,
                "resource_id": resource_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        aspect = EventPageEventsItemDriftType0Aspect(d.pop("aspect"))

        family = d.pop("family")

        message = d.pop("message")

        owner = d.pop("owner")

        resource_id = d.pop("resource_id")

        event_page_events_item_drift_type_0 = cls(
            aspect=aspect,
            family=family,
            message=message,
            owner=owner,
            resource_id=resource_id,
        )

        return event_page_events_item_drift_type_0
