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

T = TypeVar("T", bound="EventPageEventsItemDriftType0")


@_attrs_define
class EventPageEventsItemDriftType0:
    """A resource recorded in state.db that the OS no longer shows as recorded. Reported once
    when found, once when it is gone; never repaired by the check (`rebuild_account` repairs).

    What is compared is what each family declares it derives: the files it derives whole,
    the lines it contributes to a table shared by many resources, and the settings it makes
    outside files (MariaDB's users and grants).

        Attributes:
            aspect (Literal['auth_user_file_differs'] | Literal['auth_user_file_missing'] |
                Literal['authorized_keys_differs'] | Literal['authorized_keys_missing'] | Literal['backup_differs'] |
                Literal['backup_missing'] | Literal['certificate_chain_missing'] | Literal['certificate_differs'] |
                Literal['certificate_key_missing'] | Literal['crontab_differs'] | Literal['crontab_missing'] |
                Literal['dkim_key_missing'] | Literal['dovecot_entry_missing'] | Literal['dovecot_passwd_differs'] |
                Literal['ftp_login_missing'] | Literal['ftp_passwd_differs'] | Literal['home_missing'] |
                Literal['mysql_database_differs'] | Literal['mysql_database_missing'] | Literal['mysql_grant_differs'] |
                Literal['mysql_grant_missing'] | Literal['mysql_user_differs'] | Literal['mysql_user_missing'] |
                Literal['open_dkim_entry_missing'] | Literal['open_dkim_table_differs'] | Literal['php_pool_differs'] |
                Literal['php_pool_missing'] | Literal['postfix_entry_missing'] | Literal['postfix_table_differs'] |
                Literal['sieve_script_differs'] | Literal['sieve_script_missing'] | Literal['sudo_dropin_differs'] |
                Literal['sudo_dropin_missing'] | Literal['user_missing'] | Literal['vhost_differs'] | Literal['vhost_missing']):
                What about a resource drifted: a closed list, each with what it means. A new kind of
                derived file or setting adds its variants here, so the events feed's schema (and the
                OpenAPI document derived from it) lists it.
            family (str): The family whose derivation drifted.
            message (str): One line for an operator.
            owner (str): The account id, or `node:` for the node's own resources and shared tables.
            resource_id (str): The resource that drifted; for what one account's rows derive together (its
                `authorized_keys`, FPM pools, crontab) the account's id; `node:` for a table many
                resources share that holds a line state.db does not derive (no one resource's).
    """

    aspect: Literal[
        "auth_user_file_differs",
        "auth_user_file_missing",
        "authorized_keys_differs",
        "authorized_keys_missing",
        "backup_differs",
        "backup_missing",
        "certificate_chain_missing",
        "certificate_differs",
        "certificate_key_missing",
        "crontab_differs",
        "crontab_missing",
        "dkim_key_missing",
        "dovecot_entry_missing",
        "dovecot_passwd_differs",
        "ftp_login_missing",
        "ftp_passwd_differs",
        "home_missing",
        "mysql_database_differs",
        "mysql_database_missing",
        "mysql_grant_differs",
        "mysql_grant_missing",
        "mysql_user_differs",
        "mysql_user_missing",
        "open_dkim_entry_missing",
        "open_dkim_table_differs",
        "php_pool_differs",
        "php_pool_missing",
        "postfix_entry_missing",
        "postfix_table_differs",
        "sieve_script_differs",
        "sieve_script_missing",
        "sudo_dropin_differs",
        "sudo_dropin_missing",
        "user_missing",
        "vhost_differs",
        "vhost_missing",
    ]
    family: str
    message: str
    owner: str
    resource_id: str

    def to_dict(self) -> dict[str, Any]:
        aspect: Literal[
            "auth_user_file_differs",
            "auth_user_file_missing",
            "authorized_keys_differs",
            "authorized_keys_missing",
            "backup_differs",
            "backup_missing",
            "certificate_chain_missing",
            "certificate_differs",
            "certificate_key_missing",
            "crontab_differs",
            "crontab_missing",
            "dkim_key_missing",
            "dovecot_entry_missing",
            "dovecot_passwd_differs",
            "ftp_login_missing",
            "ftp_passwd_differs",
            "home_missing",
            "mysql_database_differs",
            "mysql_database_missing",
            "mysql_grant_differs",
            "mysql_grant_missing",
            "mysql_user_differs",
            "mysql_user_missing",
            "open_dkim_entry_missing",
            "open_dkim_table_differs",
            "php_pool_differs",
            "php_pool_missing",
            "postfix_entry_missing",
            "postfix_table_differs",
            "sieve_script_differs",
            "sieve_script_missing",
            "sudo_dropin_differs",
            "sudo_dropin_missing",
            "user_missing",
            "vhost_differs",
            "vhost_missing",
        ]
        aspect = self.aspect

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

        def _parse_aspect(
            data: object,
        ) -> Literal[
            "auth_user_file_differs",
            "auth_user_file_missing",
            "authorized_keys_differs",
            "authorized_keys_missing",
            "backup_differs",
            "backup_missing",
            "certificate_chain_missing",
            "certificate_differs",
            "certificate_key_missing",
            "crontab_differs",
            "crontab_missing",
            "dkim_key_missing",
            "dovecot_entry_missing",
            "dovecot_passwd_differs",
            "ftp_login_missing",
            "ftp_passwd_differs",
            "home_missing",
            "mysql_database_differs",
            "mysql_database_missing",
            "mysql_grant_differs",
            "mysql_grant_missing",
            "mysql_user_differs",
            "mysql_user_missing",
            "open_dkim_entry_missing",
            "open_dkim_table_differs",
            "php_pool_differs",
            "php_pool_missing",
            "postfix_entry_missing",
            "postfix_table_differs",
            "sieve_script_differs",
            "sieve_script_missing",
            "sudo_dropin_differs",
            "sudo_dropin_missing",
            "user_missing",
            "vhost_differs",
            "vhost_missing",
        ]:
            aspect_type_0 = cast(Literal["user_missing"], data)
            if aspect_type_0 != "user_missing":
                raise ValueError(
                    f"aspect_type_0 must match const 'user_missing', got '{aspect_type_0}'"
                )
            return aspect_type_0
            aspect_type_1 = cast(Literal["home_missing"], data)
            if aspect_type_1 != "home_missing":
                raise ValueError(
                    f"aspect_type_1 must match const 'home_missing', got '{aspect_type_1}'"
                )
            return aspect_type_1
            aspect_type_2 = cast(Literal["vhost_missing"], data)
            if aspect_type_2 != "vhost_missing":
                raise ValueError(
                    f"aspect_type_2 must match const 'vhost_missing', got '{aspect_type_2}'"
                )
            return aspect_type_2
            aspect_type_3 = cast(Literal["vhost_differs"], data)
            if aspect_type_3 != "vhost_differs":
                raise ValueError(
                    f"aspect_type_3 must match const 'vhost_differs', got '{aspect_type_3}'"
                )
            return aspect_type_3
            aspect_type_4 = cast(Literal["authorized_keys_missing"], data)
            if aspect_type_4 != "authorized_keys_missing":
                raise ValueError(
                    f"aspect_type_4 must match const 'authorized_keys_missing', got '{aspect_type_4}'"
                )
            return aspect_type_4
            aspect_type_5 = cast(Literal["authorized_keys_differs"], data)
            if aspect_type_5 != "authorized_keys_differs":
                raise ValueError(
                    f"aspect_type_5 must match const 'authorized_keys_differs', got '{aspect_type_5}'"
                )
            return aspect_type_5
            aspect_type_6 = cast(Literal["sudo_dropin_missing"], data)
            if aspect_type_6 != "sudo_dropin_missing":
                raise ValueError(
                    f"aspect_type_6 must match const 'sudo_dropin_missing', got '{aspect_type_6}'"
                )
            return aspect_type_6
            aspect_type_7 = cast(Literal["ftp_login_missing"], data)
            if aspect_type_7 != "ftp_login_missing":
                raise ValueError(
                    f"aspect_type_7 must match const 'ftp_login_missing', got '{aspect_type_7}'"
                )
            return aspect_type_7
            aspect_type_8 = cast(Literal["sudo_dropin_differs"], data)
            if aspect_type_8 != "sudo_dropin_differs":
                raise ValueError(
                    f"aspect_type_8 must match const 'sudo_dropin_differs', got '{aspect_type_8}'"
                )
            return aspect_type_8
            aspect_type_9 = cast(Literal["ftp_passwd_differs"], data)
            if aspect_type_9 != "ftp_passwd_differs":
                raise ValueError(
                    f"aspect_type_9 must match const 'ftp_passwd_differs', got '{aspect_type_9}'"
                )
            return aspect_type_9
            aspect_type_10 = cast(Literal["auth_user_file_missing"], data)
            if aspect_type_10 != "auth_user_file_missing":
                raise ValueError(
                    f"aspect_type_10 must match const 'auth_user_file_missing', got '{aspect_type_10}'"
                )
            return aspect_type_10
            aspect_type_11 = cast(Literal["auth_user_file_differs"], data)
            if aspect_type_11 != "auth_user_file_differs":
                raise ValueError(
                    f"aspect_type_11 must match const 'auth_user_file_differs', got '{aspect_type_11}'"
                )
            return aspect_type_11
            aspect_type_12 = cast(Literal["php_pool_missing"], data)
            if aspect_type_12 != "php_pool_missing":
                raise ValueError(
                    f"aspect_type_12 must match const 'php_pool_missing', got '{aspect_type_12}'"
                )
            return aspect_type_12
            aspect_type_13 = cast(Literal["php_pool_differs"], data)
            if aspect_type_13 != "php_pool_differs":
                raise ValueError(
                    f"aspect_type_13 must match const 'php_pool_differs', got '{aspect_type_13}'"
                )
            return aspect_type_13
            aspect_type_14 = cast(Literal["crontab_missing"], data)
            if aspect_type_14 != "crontab_missing":
                raise ValueError(
                    f"aspect_type_14 must match const 'crontab_missing', got '{aspect_type_14}'"
                )
            return aspect_type_14
            aspect_type_15 = cast(Literal["crontab_differs"], data)
            if aspect_type_15 != "crontab_differs":
                raise ValueError(
                    f"aspect_type_15 must match const 'crontab_differs', got '{aspect_type_15}'"
                )
            return aspect_type_15
            aspect_type_16 = cast(Literal["certificate_chain_missing"], data)
            if aspect_type_16 != "certificate_chain_missing":
                raise ValueError(
                    f"aspect_type_16 must match const 'certificate_chain_missing', got '{aspect_type_16}'"
                )
            return aspect_type_16
            aspect_type_17 = cast(Literal["certificate_key_missing"], data)
            if aspect_type_17 != "certificate_key_missing":
                raise ValueError(
                    f"aspect_type_17 must match const 'certificate_key_missing', got '{aspect_type_17}'"
                )
            return aspect_type_17
            aspect_type_18 = cast(Literal["certificate_differs"], data)
            if aspect_type_18 != "certificate_differs":
                raise ValueError(
                    f"aspect_type_18 must match const 'certificate_differs', got '{aspect_type_18}'"
                )
            return aspect_type_18
            aspect_type_19 = cast(Literal["postfix_entry_missing"], data)
            if aspect_type_19 != "postfix_entry_missing":
                raise ValueError(
                    f"aspect_type_19 must match const 'postfix_entry_missing', got '{aspect_type_19}'"
                )
            return aspect_type_19
            aspect_type_20 = cast(Literal["postfix_table_differs"], data)
            if aspect_type_20 != "postfix_table_differs":
                raise ValueError(
                    f"aspect_type_20 must match const 'postfix_table_differs', got '{aspect_type_20}'"
                )
            return aspect_type_20
            aspect_type_21 = cast(Literal["dovecot_entry_missing"], data)
            if aspect_type_21 != "dovecot_entry_missing":
                raise ValueError(
                    f"aspect_type_21 must match const 'dovecot_entry_missing', got '{aspect_type_21}'"
                )
            return aspect_type_21
            aspect_type_22 = cast(Literal["dovecot_passwd_differs"], data)
            if aspect_type_22 != "dovecot_passwd_differs":
                raise ValueError(
                    f"aspect_type_22 must match const 'dovecot_passwd_differs', got '{aspect_type_22}'"
                )
            return aspect_type_22
            aspect_type_23 = cast(Literal["open_dkim_entry_missing"], data)
            if aspect_type_23 != "open_dkim_entry_missing":
                raise ValueError(
                    f"aspect_type_23 must match const 'open_dkim_entry_missing', got '{aspect_type_23}'"
                )
            return aspect_type_23
            aspect_type_24 = cast(Literal["open_dkim_table_differs"], data)
            if aspect_type_24 != "open_dkim_table_differs":
                raise ValueError(
                    f"aspect_type_24 must match const 'open_dkim_table_differs', got '{aspect_type_24}'"
                )
            return aspect_type_24
            aspect_type_25 = cast(Literal["dkim_key_missing"], data)
            if aspect_type_25 != "dkim_key_missing":
                raise ValueError(
                    f"aspect_type_25 must match const 'dkim_key_missing', got '{aspect_type_25}'"
                )
            return aspect_type_25
            aspect_type_26 = cast(Literal["sieve_script_missing"], data)
            if aspect_type_26 != "sieve_script_missing":
                raise ValueError(
                    f"aspect_type_26 must match const 'sieve_script_missing', got '{aspect_type_26}'"
                )
            return aspect_type_26
            aspect_type_27 = cast(Literal["sieve_script_differs"], data)
            if aspect_type_27 != "sieve_script_differs":
                raise ValueError(
                    f"aspect_type_27 must match const 'sieve_script_differs', got '{aspect_type_27}'"
                )
            return aspect_type_27
            aspect_type_28 = cast(Literal["mysql_database_missing"], data)
            if aspect_type_28 != "mysql_database_missing":
                raise ValueError(
                    f"aspect_type_28 must match const 'mysql_database_missing', got '{aspect_type_28}'"
                )
            return aspect_type_28
            aspect_type_29 = cast(Literal["mysql_database_differs"], data)
            if aspect_type_29 != "mysql_database_differs":
                raise ValueError(
                    f"aspect_type_29 must match const 'mysql_database_differs', got '{aspect_type_29}'"
                )
            return aspect_type_29
            aspect_type_30 = cast(Literal["mysql_user_missing"], data)
            if aspect_type_30 != "mysql_user_missing":
                raise ValueError(
                    f"aspect_type_30 must match const 'mysql_user_missing', got '{aspect_type_30}'"
                )
            return aspect_type_30
            aspect_type_31 = cast(Literal["mysql_user_differs"], data)
            if aspect_type_31 != "mysql_user_differs":
                raise ValueError(
                    f"aspect_type_31 must match const 'mysql_user_differs', got '{aspect_type_31}'"
                )
            return aspect_type_31
            aspect_type_32 = cast(Literal["mysql_grant_missing"], data)
            if aspect_type_32 != "mysql_grant_missing":
                raise ValueError(
                    f"aspect_type_32 must match const 'mysql_grant_missing', got '{aspect_type_32}'"
                )
            return aspect_type_32
            aspect_type_33 = cast(Literal["mysql_grant_differs"], data)
            if aspect_type_33 != "mysql_grant_differs":
                raise ValueError(
                    f"aspect_type_33 must match const 'mysql_grant_differs', got '{aspect_type_33}'"
                )
            return aspect_type_33
            aspect_type_34 = cast(Literal["backup_missing"], data)
            if aspect_type_34 != "backup_missing":
                raise ValueError(
                    f"aspect_type_34 must match const 'backup_missing', got '{aspect_type_34}'"
                )
            return aspect_type_34
            aspect_type_35 = cast(Literal["backup_differs"], data)
            if aspect_type_35 != "backup_differs":
                raise ValueError(
                    f"aspect_type_35 must match const 'backup_differs', got '{aspect_type_35}'"
                )
            return aspect_type_35

        aspect = _parse_aspect(d.pop("aspect"))

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
