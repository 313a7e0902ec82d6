"""Getting a tool a valid credential: the cache, the store, token requests, the pause.

One :class:`CredentialBroker` per credential service (:func:`broker_for`). A valid
token is handed out from memory without touching the store; anything else happens under
one lock per key (and event loop), so 20 parallel calls needing one token make one
token request, and a spent authorization code is never exchanged twice. The order of
every change: the store first, then the token is used (a rotated refresh token is
saved before the access token that came with it goes out).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import weakref
from typing import TYPE_CHECKING, Any

from pydantic import SecretStr

from .._errors import ToolError
from ._credentials import (
    AccessToken,
    ApiKey,
    AuthConfig,
    BasicCredentials,
    BearerToken,
    CredentialKey,
    OAuth2Client,
)
from ._errors import CredentialRequired
from ._oauth import (
    TokenAnswer,
    TokenEndpointError,
    authorization_uri,
    discover,
    new_code_verifier,
    new_state,
    now,
    read_redirect,
    token_request,
)
from ._schemes import (
    AuthorizationCodeFlow,
    ClientCredentialsFlow,
    OAuth2Scheme,
    OpenIdConnectScheme,
)
from ._service import CredentialService, PendingAuthorization, StoredCredential, use_until

if TYPE_CHECKING:
    from .._context import ToolContext

__all__: list[str] = []

logger = logging.getLogger("tooling")

#: Keys and valid tokens kept in memory at most (beyond, memory starts again: the store
#: has them all).
MEMORY_LIMIT = 10_000
#: After a refused refresh, how long to wait (one pause after another) for a rotated
#: token another process may be storing.
ROTATION_WAITS = (0.0, 0.05, 0.2)
#: An unanswered authorization request is offered again for this long, then renewed.
PENDING_TTL = 600.0

HandedCredential = AccessToken | ApiKey | BearerToken | BasicCredentials

_brokers: weakref.WeakKeyDictionary[Any, CredentialBroker] = weakref.WeakKeyDictionary()
_by_id: dict[int, CredentialBroker] = {}  # services that cannot be weakly referenced


def broker_for(service: CredentialService) -> CredentialBroker:
    """The broker of ``service`` (one per service, made on first use)."""
    try:
        return _brokers[service]
    except KeyError:
        pass
    except TypeError:
        found = _by_id.get(id(service))
        if found is None or found.service is not service:
            found = _by_id[id(service)] = CredentialBroker(service)
        return found
    broker = _brokers[service] = CredentialBroker(service)
    return broker


class CredentialBroker:
    """Hands out credentials for one credential service (see the module docs)."""

    def __init__(self, service: CredentialService) -> None:
        self.service = service
        #: Tokens known valid: key -> (token, hand out until).
        self._valid: dict[CredentialKey, tuple[AccessToken, float]] = {}
        self._locks: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[CredentialKey, asyncio.Lock]
        ] = weakref.WeakKeyDictionary()
        self._discovered: dict[str, OAuth2Scheme] = {}
        #: (id of a config, app, user) -> (the config, its key): a key is made once.
        self._keys: dict[tuple[int, str, str], tuple[AuthConfig, CredentialKey]] = {}

    # -- the entry points ----------------------------------------------------------------

    def cached(self, key: CredentialKey) -> AccessToken | None:
        """A token for ``key`` known valid now, from memory, or None."""
        hit = self._valid.get(key)
        if hit is not None and now() < hit[1]:
            return hit[0]
        return None

    async def credential(
        self,
        config: AuthConfig,
        ctx: ToolContext | None,
        *,
        app_name: str,
        user_id: str,
        rejected: HandedCredential | None = None,
    ) -> HandedCredential:
        """A valid credential for ``config`` and this user.

        ``rejected``: the credential the resource just refused (a 401): a new one is
        obtained instead. Raises ``CredentialRequired`` when the user must act, and
        ``ToolError`` (``auth.*``) when it cannot be had.
        """
        credential = config.credential
        if credential is not None and not isinstance(credential, OAuth2Client):
            if rejected is not None:
                raise ToolError(
                    "the resource refused the configured credential", code="auth.unauthorized"
                )
            return credential
        entry = self._keys.get((id(config), app_name, user_id))
        if entry is None or entry[0] is not config:
            if len(self._keys) >= MEMORY_LIMIT:  # many users: start again, never grow unbounded
                self._keys.clear()
            entry = self._keys[(id(config), app_name, user_id)] = (
                config,
                config.key(app_name, user_id),
            )
        key = entry[1]
        if rejected is None:
            valid = self._valid.get(key)
            if valid is not None and now() < valid[1]:
                return valid[0]
        elif isinstance(rejected, AccessToken):
            hit_entry = self._valid.get(key)
            if hit_entry is not None and hit_entry[0].token == rejected.token:
                del self._valid[key]
        async with self._lock(key):
            if rejected is None:
                hit = self.cached(key)  # obtained by the call this one waited for
                if hit is not None:
                    return hit
            if credential is None:
                return await self._supplied(config, key, ctx, rejected)
            return await self._oauth(config, credential, key, ctx, rejected)

    def _lock(self, key: CredentialKey) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        locks = self._locks.get(loop)
        if locks is None:
            locks = self._locks[loop] = {}
        lock = locks.get(key)
        if lock is None:
            lock = locks[key] = asyncio.Lock()
        return lock

    # -- the store -----------------------------------------------------------------------

    async def _load(self, key: CredentialKey) -> StoredCredential | None:
        try:
            return await self.service.load_credential(key)
        except Exception as exc:
            raise self._unavailable(exc) from None

    async def _save(self, key: CredentialKey, record: StoredCredential) -> None:
        try:
            await self.service.save_credential(key, record)
        except Exception as exc:
            raise self._unavailable(exc) from None

    def _unavailable(self, exc: Exception) -> ToolError:
        kind = type(self.service).__name__
        logger.warning("credential service %s failed with %s", kind, type(exc).__name__)
        return ToolError(
            f"the credential service could not be used ({type(exc).__name__}); try again later",
            code="auth.unavailable",
        )

    def _keep(self, key: CredentialKey, record: StoredCredential) -> AccessToken:
        token = record.token
        assert token is not None
        if len(self._valid) >= MEMORY_LIMIT and key not in self._valid:
            self._valid.clear()  # the store still has them all
        self._valid[key] = (token, use_until(record))
        return token

    async def _store_answer(
        self,
        key: CredentialKey,
        answer: TokenAnswer,
        refresh_token: SecretStr | None,
        scopes: tuple[str, ...],
    ) -> AccessToken:
        issued = now()
        token = AccessToken(
            token=answer.access_token,
            expires_at=issued + answer.expires_in if answer.expires_in is not None else None,
            scopes=answer.scope if answer.scope is not None else scopes,
            token_type=answer.token_type,
        )
        record = StoredCredential(token=token, refresh_token=refresh_token, issued_at=issued)
        await self._save(key, record)  # stored before the token is used
        return self._keep(key, record)

    # -- credentials the user types in (an API key, a bearer token) ----------------------

    async def _supplied(
        self,
        config: AuthConfig,
        key: CredentialKey,
        ctx: ToolContext | None,
        rejected: HandedCredential | None,
    ) -> HandedCredential:
        kind = "bearer" if config.scheme.type == "http" else "api_key"
        request = {**config.public(), "credential_key": _key_id(key), "kind": kind}
        record = await self._load(key)
        if record is not None and record.token is not None:
            if rejected is None:
                return _supplied_as(kind, record.token.token)
            await self._save(key, StoredCredential())  # refused: ask again
        answer = ctx.get_auth_response(request) if ctx is not None else None
        value = None
        if answer is not None:
            value = answer.get(kind) or answer.get("token") or answer.get("api_key")
        if not isinstance(value, str) or not value:
            raise CredentialRequired(request)
        await self._save(key, StoredCredential(token=AccessToken(token=SecretStr(value))))
        return _supplied_as(kind, SecretStr(value))

    # -- OAuth 2 -------------------------------------------------------------------------

    async def _scheme(self, config: AuthConfig) -> OAuth2Scheme:
        scheme = config.scheme
        if isinstance(scheme, OAuth2Scheme):
            return scheme
        assert isinstance(scheme, OpenIdConnectScheme)
        found = self._discovered.get(scheme.discovery_url)
        if found is None:
            try:
                document = await discover(scheme.discovery_url)
            except TokenEndpointError as exc:
                raise ToolError(str(exc), code="auth.failed") from None
            found = OAuth2Scheme(
                flows=AuthorizationCodeFlow(
                    authorization_url=document["authorization_endpoint"],
                    token_url=document["token_endpoint"],
                    scopes=scheme.scopes,
                )
            )
            self._discovered[scheme.discovery_url] = found
        return found

    async def _oauth(
        self,
        config: AuthConfig,
        client: OAuth2Client,
        key: CredentialKey,
        ctx: ToolContext | None,
        rejected: HandedCredential | None,
    ) -> AccessToken:
        scheme = await self._scheme(config)
        record = await self._load(key)
        token = record.token if record is not None else None
        refused = (
            isinstance(rejected, AccessToken)
            and token is not None
            and (token.token == rejected.token)
        )
        if record is not None and token is not None and not refused and now() < use_until(record):
            return self._keep(key, record)
        if record is not None and record.refresh_token is not None:
            refreshed = await self._refresh(scheme, client, key, record, config.scopes)
            if refreshed is not None:
                return refreshed
            record = await self._load(key)
        flows = scheme.flows
        if flows.client_credentials is not None:
            return await self._client_credentials(flows.client_credentials, client, key, config)
        assert flows.authorization_code is not None
        return await self._authorization_code(
            flows.authorization_code, client, key, record, ctx, config
        )

    async def _client_credentials(
        self,
        flow: ClientCredentialsFlow,
        client: OAuth2Client,
        key: CredentialKey,
        config: AuthConfig,
    ) -> AccessToken:
        form = {"grant_type": "client_credentials"}
        if config.scopes:
            form["scope"] = " ".join(config.scopes)
        try:
            answer = await token_request(flow.token_url, client, form)
        except TokenEndpointError as exc:
            raise ToolError(f"getting a token failed: {exc}", code="auth.failed") from None
        return await self._store_answer(key, answer, answer.refresh_token, config.scopes)

    async def _refresh(
        self,
        scheme: OAuth2Scheme,
        client: OAuth2Client,
        key: CredentialKey,
        record: StoredCredential,
        scopes: tuple[str, ...],
    ) -> AccessToken | None:
        """The refreshed token; None when the refresh token is no good any more (it is
        then forgotten, and the caller starts over)."""
        flow = scheme.flows.authorization_code or scheme.flows.client_credentials
        assert flow is not None and record.refresh_token is not None
        form = {
            "grant_type": "refresh_token",
            "refresh_token": record.refresh_token.get_secret_value(),
        }
        if scheme.scope_on_refresh and scopes:
            form["scope"] = " ".join(scopes)
        try:
            answer = await token_request(flow.refresh_url or flow.token_url, client, form)
        except TokenEndpointError as exc:
            if exc.error not in ("invalid_grant", "invalid_token"):
                raise ToolError(f"refreshing the token failed: {exc}", code="auth.failed") from None
            # Another process may have refreshed with the same token a moment before (the
            # server then refuses the old one): its rotated token is what the store will
            # hold. Only a token nobody replaced is forgotten.
            for pause in ROTATION_WAITS:
                await asyncio.sleep(pause)
                latest = await self._load(key)
                if latest is None or latest.refresh_token == record.refresh_token:
                    continue
                if latest.token is not None and now() < use_until(latest):
                    return self._keep(key, latest)
                return None  # replaced by something else (a new authorization): start over
            logger.info("a refresh token was refused (%s): it is forgotten", exc.error)
            self._valid.pop(key, None)
            await self._save(key, StoredCredential())
            return None
        rotated = answer.refresh_token or record.refresh_token
        return await self._store_answer(key, answer, rotated, scopes)

    async def _authorization_code(
        self,
        flow: AuthorizationCodeFlow,
        client: OAuth2Client,
        key: CredentialKey,
        record: StoredCredential | None,
        ctx: ToolContext | None,
        config: AuthConfig,
    ) -> AccessToken:
        pending = record.pending if record is not None else None
        if pending is not None:
            answer = ctx.get_auth_response(pending.auth_config) if ctx is not None else None
            if answer is not None:
                return await self._exchange(flow, client, key, pending, answer, config.scopes)
            if now() - pending.created_at < PENDING_TTL:
                raise CredentialRequired(pending.auth_config)
        if not client.redirect_uri:
            raise ToolError(
                "the authorization code flow needs OAuth2Client(redirect_uri=...)",
                code="auth.failed",
            )
        state, verifier = new_state(), new_code_verifier()
        request = {
            **config.public(),
            "credential_key": _key_id(key),
            "auth_uri": authorization_uri(
                flow.authorization_url, client, config.scopes, state, verifier
            ),
            "state": state,
            "redirect_uri": client.redirect_uri,
        }
        pending = PendingAuthorization(
            state=state, code_verifier=SecretStr(verifier), auth_config=request
        )
        await self._save(key, StoredCredential(pending=pending))
        raise CredentialRequired(request)

    async def _exchange(
        self,
        flow: AuthorizationCodeFlow,
        client: OAuth2Client,
        key: CredentialKey,
        pending: PendingAuthorization,
        answer: dict[str, Any],
        scopes: tuple[str, ...],
    ) -> AccessToken:
        uri = answer.get("auth_response_uri", answer.get("authResponseUri"))
        if not isinstance(uri, str):
            raise ToolError(
                "the answer to the authorization request has no auth_response_uri",
                code="auth.failed",
            )
        found = read_redirect(uri)
        if found.get("state") != pending.state:
            raise ToolError(
                "the authorization response's state does not match the request's; it was ignored",
                code="auth.invalid_state",
            )
        # The request is used up before its code is spent: never exchanged twice.
        await self._save(key, StoredCredential())
        if "error" in found:
            error = found["error"][:100]
            raise ToolError(f"the authorization was refused: {error}", code="auth.denied")
        code = found.get("code")
        if not code:
            raise ToolError("the authorization response has no code", code="auth.failed")
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "code_verifier": pending.code_verifier.get_secret_value(),
        }
        if client.redirect_uri:
            form["redirect_uri"] = client.redirect_uri
        try:
            token = await token_request(flow.token_url, client, form)
        except TokenEndpointError as exc:
            raise ToolError(
                f"exchanging the authorization code failed: {exc}", code="auth.failed"
            ) from None
        return await self._store_answer(key, token, token.refresh_token, scopes)


def _key_id(key: CredentialKey) -> str:
    return hashlib.sha256(str(key).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _supplied_as(kind: str, value: SecretStr) -> ApiKey | BearerToken:
    return BearerToken(token=value) if kind == "bearer" else ApiKey(value=value)
