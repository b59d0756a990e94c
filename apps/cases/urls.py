
app_name = "cases"
urlpatterns: list = []
