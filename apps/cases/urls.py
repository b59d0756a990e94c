from django.urls import path

from . import views

app_name = "cases"

urlpatterns = [
    path("", views.queue, name="queue"),
    path("saved-views/", views.save_view, name="save_view"),
    path("saved-views/<int:view_id>/delete", views.delete_view, name="delete_view"),
    path("cases/<str:case_id>/", views.case_detail, name="detail"),
    path("cases/<str:case_id>/claim", views.claim, name="claim"),
    path("cases/<str:case_id>/release", views.release, name="release"),
    path("cases/<str:case_id>/renew", views.renew, name="renew"),
    path("cases/<str:case_id>/draft", views.save_draft, name="draft"),
    path("cases/<str:case_id>/decide", views.decide, name="decide"),
    path(
        "cases/<str:case_id>/request-information",
        views.request_information,
        name="request_information",
    ),
    path("cases/<str:case_id>/answer", views.record_answer, name="record_answer"),
    path("cases/<str:case_id>/reconcile", views.reconcile, name="reconcile"),
    path("recovery/", views.recovery, name="recovery"),
    path("recovery/<str:case_id>/retry", views.retry_delivery, name="retry_delivery"),
    # Issue 3: the supervisor board and its actions, supervisor actions on a case,
    # assignment (next case, shift, skip) and notifications.
    path("board/", views.board, name="board"),
    path("board/transfer", views.board_transfer, name="board_transfer"),
    path("board/priority", views.board_priority, name="board_priority"),
    path("board/capacity", views.board_capacity, name="board_capacity"),
    path("board/absence", views.board_absence, name="board_absence"),
    path("cases/<str:case_id>/transfer", views.transfer, name="transfer"),
    path("cases/<str:case_id>/reroute", views.reroute, name="reroute"),
    path("cases/<str:case_id>/priority", views.override_priority, name="override_priority"),
    path("cases/<str:case_id>/due", views.adjust_due, name="adjust_due"),
    path("cases/<str:case_id>/skip", views.skip, name="skip"),
    path("next-case", views.next_case, name="next_case"),
    path("shift/", views.shift, name="shift"),
    path("notifications/", views.notifications, name="notifications"),
    path("notifications/read", views.mark_all_read, name="mark_all_read"),
    path("notifications/<int:notification_id>/read", views.mark_read, name="mark_read"),
    # The auditor history and its CSV export (read-only roles; see views/audit.py).
    path("audit/", views.audit_history, name="audit_history"),
    path("audit/export.csv", views.audit_export, name="audit_export"),
]
