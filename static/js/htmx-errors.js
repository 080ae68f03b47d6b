/* A request htmx sends that fails (an error status, or no answer at all) says so where its
   answer would have gone, instead of leaving the page as it was. An expired session or a
   stale form (403) says to reload; the server's own message is not shown (it is a page).
   Loaded on every page by templates/base.html. */
(function () {
  "use strict";
  function say(target, text) {
    if (!target) return;
    var box = document.createElement("div");
    box.className = "errors request-failed";
    box.setAttribute("role", "alert");
    var strong = document.createElement("strong");
    strong.textContent = "Nothing was done. ";
    box.appendChild(strong);
    box.appendChild(document.createTextNode(text));
    target.replaceChildren(box);
  }
  document.addEventListener("htmx:responseError", function (e) {
    var status = e.detail.xhr ? e.detail.xhr.status : 0;
    var text = status === 403
      ? "Your session has expired or the form is out of date (403). Reload the page, sign in again if asked, and repeat."
      : status === 413
        ? "The files are too large to upload (413)."
        : "The server could not do this (" + status + "). Try again; if it happens again, tell an administrator.";
    say(e.detail.target, text);
  });
  // A session that ended sends the request on to the sign-in page: say so, do not swap it in.
  document.addEventListener("htmx:beforeSwap", function (e) {
    var url = e.detail.xhr ? e.detail.xhr.responseURL || "" : "";
    if (url.indexOf("/accounts/login/") !== -1) {
      e.detail.shouldSwap = false;
      say(e.detail.target, "Your session has expired. Reload the page and sign in again, then repeat.");
    }
  });
  document.addEventListener("htmx:sendError", function (e) {
    say(e.detail.target, "The server did not answer: check the connection and try again.");
  });
})();
