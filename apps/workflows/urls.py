from django.urls import path

from . import views

app_name = "workflows"
urlpatterns = [
    path(
        "demo/webhooks/<slug:workflow_type>/",
        views.demo_webhook_receiver,
        name="demo-webhook-receiver",
    ),
]
