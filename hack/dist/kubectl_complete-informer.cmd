@echo off
rem kubectl (1.26 and later) runs kubectl_complete-informer from PATH to complete
rem the arguments of "kubectl informer"; kubectl-informer answers.
kubectl-informer.exe __complete %*
