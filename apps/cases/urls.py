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
]
