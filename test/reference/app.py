"""The reference for Saltdeck's 422 bodies: FastAPI + pydantic v2 declaring the interface's request models (contract §1.1).

Reads one request a line on stdin ({"method", "path", "body"?, "raw"?}) and writes {"status", "body"} a line on stdout,
answered in process by FastAPI's TestClient. Handlers do nothing: only validation answers matter here.
"""
import json
import sys
from datetime import datetime
from typing import Annotated, Literal, Optional, Union
from uuid import UUID

from fastapi import FastAPI, Path, Query
from fastapi.exceptions import RequestValidationError
from fastapi.testclient import TestClient
from pydantic import BaseModel, field_validator, ConfigDict, Field, HttpUrl, StringConstraints, UrlConstraints

# Contract §1.1 additions, in pydantic's own vocabulary: no control characters, names trimmed before their length.
PLAIN = r'^[^\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]*$'
Plain = lambda lo, hi, strip=False: Annotated[str, StringConstraints(min_length=lo, max_length=hi, pattern=PLAIN, strip_whitespace=strip)]
Glob = Annotated[str, StringConstraints(min_length=1, max_length=128, pattern=r'^[^\s\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]+$')]
Int = lambda lo, hi: Annotated[int, Field(ge=lo, le=hi)]


class Strict(BaseModel):
    model_config = ConfigDict(extra='forbid')


class RoleCreate(Strict):
    name: Plain(1, 64, True)
    description: Plain(0, 255) = ''


class RolePatch(Strict):
    description: Optional[Plain(0, 255)] = None


TargetGlob = Annotated[str, StringConstraints(min_length=1, max_length=255, pattern=r'^[^\s\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]+$')]


class PermissionIn(Strict):
    verb: Glob
    resource_glob: Glob
    target_glob: TargetGlob = '*'


class TokenCreate(Strict):
    name: Plain(1, 128, True)
    expires_in_days: Optional[Int(1, 3650)] = None


class PollersPatch(Strict):
    inventory_refresh_minutes: Optional[Int(0, 1440)] = None
    inventory_refresh_initial_delay_s: Optional[Int(0, 3600)] = None
    fleet_poll_interval_seconds: Optional[Int(0, 86400)] = None
    jobs_poll_interval_seconds: Optional[Int(0, 86400)] = None
    minion_state_keys_interval_seconds: Optional[Int(0, 86400)] = None
    minion_state_presence_interval_seconds: Optional[Int(0, 86400)] = None
    minion_state_grains_interval_seconds: Optional[Int(0, 86400)] = None
    minion_state_initial_delay_seconds: Optional[Int(0, 3600)] = None
    event_stream_enabled: Optional[bool] = None
    event_stream_retention_days: Optional[Int(1, 365)] = None


class WidgetPatch(Strict):
    widget_hide_dispatch: Optional[bool] = None
    widget_hide_routine: Optional[bool] = None
    widget_show_jobs: Optional[bool] = None
    widget_show_keys: Optional[bool] = None
    widget_show_minions: Optional[bool] = None
    widget_event_count: Optional[Int(1, 50)] = None
    widget_heartbeat_minutes: Optional[Int(5, 1440)] = None


# A role by id or by name (issue 23 item 5).
RoleRef = Annotated[str, StringConstraints(min_length=1, max_length=64)]


class UserCreate(Strict):
    username: Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r'^[A-Za-z0-9._@-]+$')]
    password: Annotated[str, StringConstraints(min_length=8, max_length=1024)]
    display_name: Plain(0, 128) = ''
    must_change_pw: bool = True
    is_active: bool = True
    roles: list[RoleRef] = []


class Login(BaseModel):
    username: Annotated[str, StringConstraints(min_length=1, max_length=1024)]
    password: Annotated[str, StringConstraints(min_length=1, max_length=1024)]


class UserPatch(Strict):
    display_name: Optional[Plain(0, 128)] = None
    is_active: Optional[bool] = None
    roles: Optional[list[RoleRef]] = None


class PasswordSet(Strict):
    new_password: Annotated[str, StringConstraints(min_length=8, max_length=1024)]
    must_change_pw: Optional[bool] = True


class LoggingPatch(Strict):
    log_format: Optional[Literal['json', 'text']] = None


class SaltPatch(Strict):
    url: Optional[Annotated[HttpUrl, UrlConstraints(max_length=2048)]] = None
    username: Optional[Annotated[str, StringConstraints(min_length=1, max_length=255)]] = None
    password: Optional[Annotated[str, StringConstraints(min_length=1, max_length=1024)]] = None
    verify: Optional[bool] = None
    eauth: Optional[Literal['pam', 'sharedsecret', 'ldap', 'file', 'auto']] = None
    presence_method: Optional[Literal['present', 'status']] = None


AlertGlob = Annotated[str, StringConstraints(min_length=1, max_length=255)]


class AlertParams(Strict):
    fun_glob: Optional[AlertGlob] = None
    for_minutes: Optional[Int(1, 10080)] = None
    min_severity: Optional[Literal['low', 'medium', 'high', 'critical']] = None


class AlertRuleCreate(Strict):
    name: Plain(1, 128, True)
    kind: Literal['run_failed', 'run_blocked', 'run_changed', 'minion_offline', 'key_pending', 'salt_unreachable', 'vulnerable']
    minion_glob: AlertGlob = '*'
    params: AlertParams = AlertParams()
    channel_ids: Annotated[list[UUID], Field(max_length=50)] = []
    enabled: bool = True
    renotify_minutes: Int(0, 10080) = 0


class AlertRulePatch(Strict):
    name: Optional[Plain(1, 128, True)] = None
    minion_glob: Optional[AlertGlob] = None
    params: Optional[AlertParams] = None
    channel_ids: Optional[Annotated[list[UUID], Field(max_length=50)]] = None
    enabled: Optional[bool] = None
    renotify_minutes: Optional[Int(0, 10080)] = None


class SilenceCreate(Strict):
    rule_id: Optional[UUID] = None
    subject_glob: AlertGlob = '*'
    ends_at: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    comment: Plain(0, 500) = ''

    @field_validator('ends_at')
    @classmethod
    def aware(cls, v):
        try:
            d = datetime.fromisoformat(v)
        except ValueError:
            d = None
        if d is None or d.tzinfo is None:
            raise ValueError('ends_at must be a date and time with its zone, e.g. 2030-01-01T00:00:00Z')
        return v


class ChannelCreate(Strict):
    name: Plain(1, 128, True)
    type: Literal['webhook', 'slack', 'email']
    config: dict
    enabled: bool = True


class RunIn(Strict):
    tgt: Union[Annotated[str, StringConstraints(min_length=1, max_length=1024)], Annotated[list[Annotated[str, StringConstraints(min_length=1, max_length=255)]], Field(max_length=10000)]]
    tgt_type: Literal['glob', 'pcre', 'list', 'grain', 'grain_pcre', 'pillar', 'pillar_pcre', 'nodegroup', 'range', 'compound', 'ipcidr'] = 'glob'
    fun: Annotated[str, StringConstraints(min_length=1, max_length=255, pattern=r'^[A-Za-z0-9_.]+$')]
    arg: Annotated[list, Field(max_length=100)] = []
    kwarg: dict = {}


class RolesPut(Strict):
    role_ids: list[RoleRef]


Limit = lambda hi: Annotated[int, Query(ge=1, le=hi)]
Offset = Annotated[int, Query(ge=0)]

app = FastAPI()
ok = {}


@app.post('/api/roles')
def role_create(b: RoleCreate): return ok


@app.patch('/api/roles/{role_id}')
def role_patch(role_id: UUID, b: RolePatch): return ok


@app.post('/api/roles/{role_id}/permissions')
def perm_add(role_id: UUID, b: PermissionIn): return ok


@app.post('/api/auth/tokens')
def token_create(b: TokenCreate): return ok


@app.put('/api/admin/settings/pollers')
def pollers(b: PollersPatch): return ok


@app.put('/api/admin/settings/widget')
def widget(b: WidgetPatch): return ok


@app.post('/api/users')
def user_create(b: UserCreate): return ok


@app.post('/api/auth/login')
def login(b: Login): return ok


@app.patch('/api/users/{user_id}')
def user_patch(user_id: UUID, b: UserPatch): return ok


@app.post('/api/users/{user_id}/password')
def user_password(user_id: UUID, b: PasswordSet): return ok


@app.put('/api/admin/settings/logging')
def logging_(b: LoggingPatch): return ok


@app.put('/api/admin/settings/salt')
def salt_(b: SaltPatch): return ok


@app.post('/api/run')
def run(b: RunIn): return ok


@app.get('/api/activity')
def activity(since_minutes: Annotated[Optional[int], Query(ge=1, le=10080)] = None, hide_dispatch: bool = False, hide_routine: bool = False,
             search: Annotated[Optional[str], Query(max_length=200)] = None, minion: Annotated[Optional[str], Query(max_length=255)] = None,
             limit: Limit(500) = 100, offset: Offset = 0): return ok


@app.get('/api/inventory/packages')
def packages(q: Annotated[Optional[str], Query(max_length=200)] = None, sort: Optional[Literal['name', 'minion_count', 'version_count', 'last_seen']] = None,
             order: Optional[Literal['asc', 'desc']] = None, limit: Limit(500) = 100, offset: Offset = 0): return ok


@app.get('/api/inventory/packages/{name}/minions')
def package_minions(name: Annotated[str, Path(min_length=1, max_length=512)], source: Annotated[Optional[str], Query(min_length=1, max_length=64)] = None,
                    op: Optional[Literal['lt', 'le', 'eq', 'ne', 'ge', 'gt']] = None, version: Annotated[Optional[str], Query(min_length=1, max_length=256)] = None,
                    binaries: Optional[bool] = None, limit: Limit(1000) = 100, offset: Offset = 0):
    # Contract §12: op and version go together; the missing one is named.
    if (op is None) != (version is None):
        raise RequestValidationError([{'type': 'value_error', 'loc': ('query', 'op' if op is None else 'version'),
                                       'msg': 'Value error, op and version go together', 'ctx': {'error': {}}}])
    return ok


Severity = Optional[Literal['critical', 'high', 'medium', 'low', 'none', 'unknown']]


@app.get('/api/vulns')
def vulns(q: Annotated[Optional[str], Query(max_length=200)] = None, severity: Severity = None,
          package: Annotated[Optional[str], Query(min_length=1, max_length=512)] = None, include_unaffected: Optional[bool] = None,
          sort: Optional[Literal['severity', 'minions', 'id']] = None, limit: Limit(500) = 100, offset: Offset = 0): return ok


@app.get('/api/vulns/{vuln_id}')
def vuln(vuln_id: Annotated[str, Path(min_length=1, max_length=200)], limit: Limit(5000) = 500, offset: Offset = 0): return ok


@app.get('/api/minions/{minion_id}/vulns')
def minion_vulns(minion_id: str, severity: Severity = None, limit: Limit(1000) = 200, offset: Offset = 0): return ok


@app.put('/api/users/{user_id}/roles')
def user_roles(user_id: UUID, b: RolesPut): return ok


@app.get('/api/jobs')
def jobs(fun: Annotated[Optional[str], Query(max_length=255)] = None, user: Annotated[Optional[str], Query(max_length=255)] = None,
         include_internal: bool = False, limit: Limit(500) = 100, offset: Offset = 0): return ok


@app.get('/api/audit')
def audit(user: Annotated[Optional[str], Query(max_length=64)] = None, action: Annotated[Optional[str], Query(max_length=64)] = None,
          since_minutes: Annotated[Optional[int], Query(ge=1, le=525600)] = None,
          limit: Limit(500) = 100, offset: Offset = 0): return ok


@app.get('/api/minions/{minion_id}/runs')
def runs(minion_id: str, limit: Limit(200) = 20, offset: Offset = 0,
         status: Optional[Literal['healthy', 'changed', 'unhealthy', 'blocked']] = None, test: Optional[bool] = None): return ok


@app.get('/api/minions/{minion_id}/runs/{jid}/diff')
def run_diff(minion_id: str, jid: str, against: Annotated[str, Query(min_length=1, max_length=64)] = 'previous'): return ok


@app.get('/api/runs/trend')
def trend(days: Annotated[int, Query(ge=1, le=365)] = 30): return ok


@app.get('/api/runs/failing-states')
def failing(since_minutes: Annotated[Optional[int], Query(ge=1, le=525600)] = None, limit: Limit(200) = 20): return ok


@app.post('/api/alerts/rules')
def alert_rule_create(b: AlertRuleCreate): return ok


@app.patch('/api/alerts/rules/{rule_id}')
def alert_rule_patch(rule_id: UUID, b: AlertRulePatch): return ok


@app.post('/api/alerts/silences')
def silence_create(b: SilenceCreate): return ok


@app.post('/api/alerts/channels')
def channel_create(b: ChannelCreate): return ok


@app.get('/api/alerts')
def alerts_list(state: Literal['firing', 'resolved', 'all'] = 'firing', rule_id: Optional[UUID] = None,
                subject: Annotated[Optional[str], Query(max_length=255)] = None, limit: Limit(500) = 100, offset: Offset = 0): return ok


@app.get('/api/alerts/deliveries')
def deliveries(status: Optional[Literal['pending', 'sent', 'failed']] = None, limit: Limit(500) = 100, offset: Offset = 0): return ok


client = TestClient(app)
for line in sys.stdin:
    r = json.loads(line)
    kw = {}
    if 'raw' in r:
        kw = {'content': r['raw'].encode(), 'headers': {'content-type': 'application/json'}}
    elif 'body' in r:
        kw = {'json': r['body']}
    res = client.request(r['method'], r['path'], **kw)
    print(json.dumps({'status': res.status_code, 'body': res.json()}), flush=True)
