export default {
  source: {
    id: 124324,
    name: "Email",
    position: 1,
    default: true,
    visible: true,
    created_at: "2019-06-11T07:16:45Z",
    updated_at: "2019-06-11T07:16:45Z"
  }
};
