from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.ensure_redirect_request_status import EnsureRedirectRequestStatus

T = TypeVar("T", bound="EnsureRedirectRequest")


@_attrs_define
class EnsureRedirectRequest:
    """
    Attributes:
        account (str):
        id (str):
        source (str): The path prefix redirected (`/` for the whole site, never the ACME challenge path).
        status (EnsureRedirectRequestStatus): 301, 302, 307 or 308.
        target (str): Where to: the rest of the path is appended. A vhost leaves out a redirect that would
            send a request back to itself under the same rule (the target on one of the domain's
            names, over the vhost's own scheme, its path beneath the source), so a redirect of `/`
            to `https://<the domain>/` applies over HTTP and not over HTTPS.
        web_domain (str): The web domain whose paths are redirected.
    """

    account: str
    id: str
    source: str
    status: EnsureRedirectRequestStatus
    target: str
    web_domain: str

    def to_dict(self) -> dict[str, Any]:
        account = self.account

        id = self.id

        source = self.source

        status = self.status.value

        target = self.target

        web_domain = self.web_domain

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "account": account,
                "id": id,
                "source": source,
                "status": status,
                "target": target,
                "web_domain": web_domain,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        account = d.pop("account")

        id = d.pop("id")

        source = d.pop("source")

        status = EnsureRedirectRequestStatus(d.pop("status"))

        target = d.pop("target")

        web_domain = d.pop("web_domain")

        ensure_redirect_request = cls(
            account=account,
            id=id,
            source=source,
            status=status,
            target=target,
            web_domain=web_domain,
        )

        return ensure_redirect_request
