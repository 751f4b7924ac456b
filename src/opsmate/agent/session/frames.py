"""The words around a follow-up answer, in the question's language (English, Chinese).

An answer is a frame ("Yes: {what} ({ids})." / "是的：{what}（{ids}）。") filled with the
evidence's own text, which is never translated. :func:`say` fills a frame;
:func:`not_read` says what the session did not read that bears on the question (the
tools that could answer it and were not called, and everything outside the session's
environment and window).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from opsmate.agent.session.intent import Lang
from opsmate.agent.state import TaskState

FRAMES: dict[str, dict[str, str]] = {
    "yes": {"en": "Yes: {items}.", "zh": "是的：{items}。"},
    "list": {"en": "{items}.", "zh": "{items}。"},
    "changed_item": {
        "en": "{head}{when} changed {edits}",
        "zh": "{head}{when}更改了 {edits}",
    },
    "cite": {"en": " ({ids})", "zh": "（{ids}）"},
    "linked": {
        "en": ' {key} belongs to the {topic} as {eid} shows: "{quote}".',
        "zh": " {eid} 显示 {key} 属于{topic}：“{quote}”。",
    },
    "no_change_match": {
        "en": "No: the changes read do not touch {topic}: {seen} ({ids}).",
        "zh": "否：已读取的变更没有涉及{topic}：{seen}（{ids}）。",
    },
    "none_touch": {
        "en": "The changes read do not touch {topic}: {seen} ({ids}).",
        "zh": "已读取的变更没有涉及{topic}：{seen}（{ids}）。",
    },
    "changes_no_diff": {
        "en": "The changes read show no edit of the pod template: {seen} ({ids}).",
        "zh": "已读取的变更没有显示 Pod 模板的修改：{seen}（{ids}）。",
    },
    "no_changes": {
        "en": "No change was seen in what was read ({ids}).",
        "zh": "已读取的数据中没有发现变更（{ids}）。",
    },
    "value_edit_before": {
        "en": "{key} was {old} before {head}{when}, which set it to {new} ({ids}).",
        "zh": "{key} 在 {head}{when}之前是 {old}，之后被改为 {new}（{ids}）。",
    },
    "value_edit_now": {
        "en": "{key} is {new} since {head}{when} (it was {old}) ({ids}).",
        "zh": "{key} 自 {head}{when}起为 {new}（之前是 {old}）（{ids}）。",
    },
    "value_metric_before": {
        "en": "Before {time} it was {before}: {statement} ({ids}).",
        "zh": "{time} 之前是 {before}：{statement}（{ids}）。",
    },
    "value_metric_now": {
        "en": "It is {after} since {time}: {statement} ({ids}).",
        "zh": "自 {time} 起为 {after}：{statement}（{ids}）。",
    },
    "value_none": {
        "en": "No value of {topic} was read.",
        "zh": "没有读取到{topic}的值。",
    },
    "which_found": {
        "en": "{n} {entity}(s) {pred}: {items} ({ids}).",
        "zh": "{n} 个 {entity} {pred}：{items}（{ids}）。",
    },
    "which_yes": {
        "en": "Yes: {n} {entity}(s) {pred}: {items} ({ids}).",
        "zh": "是的：{n} 个 {entity} {pred}：{items}（{ids}）。",
    },
    "which_none_pods": {
        "en": "None of the {n} pods read {pred}: every container shows 0 restarts ({ids}).",
        "zh": "已读取的 {n} 个 Pod 都没有{pred}：所有容器的重启次数都是 0（{ids}）。",
    },
    "no_prefix": {"en": "No. ", "zh": "没有。"},
    "which_none_read": {
        "en": "None of the {n} pods read {pred} ({ids}).",
        "zh": "已读取的 {n} 个 Pod 中没有{pred}的（{ids}）。",
    },
    "which_none": {
        "en": "None of what was read shows {entity}s that {pred}.",
        "zh": "已读取的数据中没有{pred}的{entity}。",
    },
    "replaced": {
        "en": " {n} pod(s) were stopped and replaced during the rollout, not restarted: "
        "{what} ({ids}).",
        "zh": " 发布期间有 {n} 个 Pod 被停止并替换（不是重启）：{what}（{ids}）。",
    },
    "health_bad": {
        "en": "No: problems were seen for {name}: {items}.",
        "zh": "不健康：{name} 出现了问题：{items}。",
    },
    "health_warn": {
        "en": "Mostly, with warnings for {name}: {items}.",
        "zh": "基本正常，但 {name} 有警告：{items}。",
    },
    "health_ok": {
        "en": "Yes, as far as what was read shows: nothing unhealthy was seen for {name} "
        "({items}).",
        "zh": "从已读取的数据看是健康的：{name} 没有发现异常（{items}）。",
    },
    "health_unread": {
        "en": "{name} was not read in this session, so its health is not known.",
        "zh": "本会话没有读取 {name} 的数据，无法判断其健康状况。",
    },
    "pods_of": {
        "en": "its pods: {items} ({ids})",
        "zh": "其 Pod：{items}（{ids}）",
    },
    "open": {
        "en": "From what was already read: {items}.",
        "zh": "根据已读取的数据：{items}。",
    },
    "nothing": {
        "en": "Nothing read so far answers this.",
        "zh": "目前读取的数据无法回答这个问题。",
    },
    "not_read": {
        "en": " Not read: {items}.",
        "zh": " 未读取：{items}。",
    },
    "outside": {
        "en": "anything outside {scope}",
        "zh": "{scope} 之外的任何数据",
    },
    "refused": {
        "en": "Not done: {items}. No call was made for this question; ask again without it "
        "to investigate the rest within the session's scope.",
        "zh": "未执行：{items}。本问题没有进行任何调用；"
        "去掉这部分后重新提问，即可在本会话范围内继续调查。",
    },
    "refuse_env": {
        "en": "'{asked}' is not read: this session is limited to '{env}' (the environment set "
        "by the first question); start a new session for {asked}",
        "zh": "不读取 '{asked}'：本会话仅限于 '{env}'（由第一个问题确定的环境）；"
        "如需 {asked} 请新开会话",
    },
    "refuse_service": {
        "en": "'{svc}' is not read: this session is limited to {allowed}",
        "zh": "不读取 '{svc}'：本会话仅限于 {allowed}",
    },
    "new_facts": {
        "en": "{calls} read-only call(s) for this question found {n} new fact(s): {items}.",
        "zh": "本问题进行了 {calls} 次只读调用，发现 {n} 条新事实：{items}。",
    },
    "nothing_new": {
        "en": "{calls} read-only call(s) for this question found nothing new.",
        "zh": "本问题进行了 {calls} 次只读调用，没有发现新内容。",
    },
    "root_changed": {
        "en": "The root cause changed: {root}.",
        "zh": "根因变了：{root}。",
    },
    "root_same": {
        "en": "The root cause is unchanged (the full report follows).",
        "zh": "根因没有变化（完整报告见下文）。",
    },
    "root_gone": {
        "en": "The earlier root cause no longer holds; see the report.",
        "zh": "之前的根因不再成立；见报告。",
    },
    "root_none": {
        "en": "Still no root cause: {summary}",
        "zh": "仍未找到根因：{summary}",
    },
}

WORDS: dict[str, dict[str, str]] = {
    "pod": {"en": "pod", "zh": "Pod"},
    "container": {"en": "container", "zh": "容器"},
    "service": {"en": "service", "zh": "服务"},
    "node": {"en": "node", "zh": "节点"},
    "deployment": {"en": "deployment", "zh": "部署"},
    "alert": {"en": "alert", "zh": "告警"},
    "restart": {"en": "restarted", "zh": "重启过"},
    "fail": {"en": "failed", "zh": "出错"},
    "unready": {"en": "are not ready", "zh": "未就绪"},
    "pending": {"en": "are pending", "zh": "处于挂起状态"},
    "evicted": {"en": "were evicted", "zh": "被驱逐"},
    "change": {"en": "changed", "zh": "发生了变更"},
    "and": {"en": " and ", "zh": "；"},
    "sep": {"en": "; ", "zh": "；"},
    "at": {"en": " at {t}", "zh": "（{t}）"},
    "restarts": {"en": "{n} restart(s)", "zh": "重启 {n} 次"},
    "last": {"en": "last {reason}", "zh": "上次 {reason}"},
    "topic_any": {"en": "what was asked about", "zh": "所问的内容"},
}

# tool -> how a person calls what it reads
TOOL_WORDS: dict[str, dict[str, str]] = {
    "rollout_history": {"en": "the rollout history", "zh": "发布历史"},
    "list_pods": {"en": "the pod list", "zh": "Pod 列表"},
    "get_events": {"en": "the Kubernetes events", "zh": "Kubernetes 事件"},
    "query_metrics": {"en": "metrics", "zh": "指标"},
    "log_stats": {"en": "logs", "zh": "日志"},
    "search_logs": {"en": "logs", "zh": "日志"},
    "pod_logs": {"en": "pod logs", "zh": "Pod 日志"},
    "list_alerts": {"en": "alerts", "zh": "告警"},
    "list_objects": {"en": "ConfigMaps and other objects", "zh": "ConfigMap 等对象"},
}


def say(frame: str, lang: Lang, /, **values: Any) -> str:
    """Frame ``frame`` in ``lang`` filled with ``values`` (the evidence text as is)."""
    return FRAMES[frame][lang].format(**values)


def word(key: str, lang: Lang, /, **values: Any) -> str:
    """A word of the frames in ``lang`` (``restarts`` -> "3 restart(s)" / "重启 3 次")."""
    text = WORDS[key][lang]
    return text.format(**values) if values else text


def ids(evidence: Iterable[str]) -> str:
    return ", ".join(dict.fromkeys(evidence))


def clock(t: datetime | None, lang: Lang) -> str:
    """`` at 09:59:41`` / ``（09:59:41）`` or empty."""
    return word("at", lang, t=t.strftime("%H:%M:%S")) if t else ""


def scope_text(state: TaskState) -> str:
    """``test, 09:30 .. 10:06``: the environment and window the session reads."""
    c = state.constraints
    parts = [c.environment or "any environment"]
    if c.window_from or c.window_to:
        a = c.window_from.strftime("%Y-%m-%d %H:%M") if c.window_from else "?"
        b = c.window_to.strftime("%H:%M") if c.window_to else "now"
        parts.append(f"{a} .. {b}")
    return ", ".join(parts)


def not_read(
    state: TaskState,
    lang: Lang,
    tools: Iterable[str],
    relevant: Iterable[str],
    extra: Iterable[str] = (),
) -> str:
    """`` Not read: the rollout history; anything outside test, 09:30 .. 10:06.``"""
    called = {a.tool for a in state.actions if a.status in ("success", "partial", "no_data")}
    available = set(tools)
    items: list[str] = list(extra)
    for tool in relevant:
        if tool in available and tool not in called and tool in TOOL_WORDS:
            label = TOOL_WORDS[tool][lang]
            if label not in items:
                items.append(label)
    items.append(say("outside", lang, scope=scope_text(state)))
    return say("not_read", lang, items=word("sep", lang).join(items))
